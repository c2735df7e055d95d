import { PeriodicRound } from '../../core/periodic-round';
import type { Logger } from '../../observability/logger';
import type { Registry } from '../../observability/metrics';
import { endOf, isActive, replayedReason, vanishedReason, type MitigationLedger, type MitigationRecord, type UnreadableEntry } from '../../streams/mitigation-ledger';
import type { BgpSpeaker, Neighbour } from './bgp-speaker';
import { mitigationDestination, type Mitigation } from '../../core/mitigation';
import { prefixWithin } from '../../core/mitigation-policy';
import { mitigationPath } from './mitigations';
import { LeaseLostError, type ReconcilerLease } from './reconciler-lease';
import { reconcilerMetrics } from './reconciler-metrics';

export interface MitigationReconcilerConfig {
  /** How often the speaker is compared with the ledger; a route outlives its end by at most about this. */
  intervalMs: number;
  /** The routers the speaker announces to (the operator's BGP_NEIGHBORS): added again whenever the speaker lacks one. */
  neighbours: Neighbour[];
  /** How long an ended record stays in the ledger before it is forgotten, so the ledger read every interval stays small. */
  keepEndedMs: number;
}

/** One form for a mitigation whatever the order of its fields and lists: what the ledger holds and the speaker reads back compare equal. */
function mitigationKey(m: Mitigation): string {
  const canonical = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(canonical).sort((a, b) => (JSON.stringify(a) < JSON.stringify(b) ? -1 : 1));
    if (value && typeof value === 'object') {
      return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined).sort(([a], [b]) => (a < b ? -1 : 1)).map(([k, v]) => [k, canonical(v)]));
    }
    return value;
  };
  return JSON.stringify(canonical(m));
}

/** The mitigation a ledger entry holds, if the speaker can express it (mitigationPath checks every field). */
function announceable(value: unknown): Mitigation | undefined {
  try {
    mitigationPath(value as Mitigation);
    return value as Mitigation;
  } catch {
    return undefined;
  }
}

const refusalKind = (reason: string) => (reason.startsWith(replayedReason) ? 'replayed' : reason === vanishedReason ? 'vanished' : 'forged');

/**
 * Makes the BGP speaker announce exactly what the ledger says is active now:
 * every interval, and so after any restart of the speaker (which comes back
 * with no neighbours and no routes) or of this service. A route whose end
 * passed is withdrawn even if the run that announced it is gone, so nothing
 * stays announced past its end for longer than an interval (or, while the
 * speaker is frozen, than the neighbours' hold time).
 *
 * One reconciler per speaker at a time: a pass runs only in the process that
 * holds the speaker's lease (reconciler-lease.ts), renewed at the start of
 * each pass and again right before each change to the speaker; the others
 * stand by, and one of them takes over once a holder stops renewing
 * (docs/operations/cluster.md says how soon).
 */
export class MitigationReconciler {
  private readonly rounds: PeriodicRound;
  private lastSuccess = 0;
  /** A pass at the next moment the ledger's desired state changes (a start or an end), sooner than the interval would. */
  private nextChange?: NodeJS.Timeout;
  /** A pass when the lease another process stopped renewing should have expired, sooner than the interval would. */
  private nextTry?: NodeJS.Timeout;
  private lastError?: string;
  private readonly metrics;
  /** Entries already reported, by key and reason: each refusal is logged and counted once, the gauge says how many stand. */
  private reported = new Set<string>();
  /** Whether the last pass found another process holding the speaker's lease. */
  private standingBy = false;

  constructor(
    private readonly config: MitigationReconcilerConfig,
    private readonly deps: {
      speaker: BgpSpeaker;
      ledger: MitigationLedger;
      /** Whether this process is the one that changes the speaker now. */
      lease: ReconcilerLease;
      /** The prefixes approved for a workspace now (CIDR): an active mitigation outside them all is withdrawn. */
      approvedPrefixes: (orgId: string) => Promise<readonly string[]>;
      registry: Registry;
      log: Logger;
      now?: () => number;
    },
  ) {
    this.metrics = reconcilerMetrics(deps.registry);
    this.rounds = new PeriodicRound(config.intervalMs, () => this.reconcile());
  }

  start(): Promise<void> {
    this.rounds.start({ now: true });
    return Promise.resolve();
  }

  async stop(): Promise<void> {
    clearTimeout(this.nextChange);
    clearTimeout(this.nextTry);
    await this.rounds.stop();
    // After the last pass: the next process takes over at its next pass, not once the lease has expired.
    await this.deps.lease.release();
  }

  /**
   * Schedules a pass just after the earliest start or end still to come: the
   * route of a mitigation leaves the routers at its end, not up to an
   * interval later.
   */
  private passAtNextChange(records: readonly MitigationRecord[], now: number): void {
    const upcoming = records.flatMap((r) => [r.starts_at, endOf(r)]).filter((t) => t > now);
    clearTimeout(this.nextChange);
    if (!upcoming.length) return;
    const wait = Math.min(...upcoming) - now + 5;
    if (wait >= this.config.intervalMs) return;
    this.nextChange = setTimeout(() => void this.rounds.runFresh(), wait);
    this.nextChange.unref();
  }

  /** A reconciliation that reads the ledger after this call (the automation runs ask for one after each change they write). */
  reconcileNow(): Promise<void> {
    return this.rounds.runFresh();
  }

  /** For /healthz: down while reconciliations fail for more than three intervals; a process standing by is up while it can read the lease. */
  async probe(): Promise<{ detail: string }> {
    const now = (this.deps.now ?? Date.now)();
    if (now - this.lastSuccess > 3 * this.config.intervalMs) throw new Error(`the speaker does not match the ledger: ${this.lastError ?? 'not reconciled yet'}`);
    if (this.standingBy) return { detail: `standing by: ${(await this.deps.lease.holder()) ?? 'another process'} reconciles the speaker` };
    return { detail: `reconciled ${new Date(this.lastSuccess).toISOString()}` };
  }

  private async reconcile(): Promise<void> {
    try {
      // A speaker that was down at start (or lacked its API's definition) is connected on a later pass.
      if (!this.deps.speaker.connected) await this.deps.speaker.start();
      // Renewed (or taken) just before the pass: it also fences the routing policy's check, whose change is the speaker's own call.
      if (!(await this.deps.lease.hold())) return this.standBy();
      const failed: string[] = [];
      await this.ensureNeighbours(failed);
      await this.matchRoutes(failed);
      if (failed.length) throw new Error(`${failed.length} change(s) failed, first ${failed[0]}`);
      this.metrics.reconciles.inc();
      if (this.lastError !== undefined) this.deps.log.info('the BGP speaker matches the mitigation ledger again');
      this.passed(false);
    } catch (err) {
      // The lease went to another process during the pass (reconciler-lease.ts counted it): that one makes the rest.
      if (err instanceof LeaseLostError) return this.passed(true);
      this.metrics.failures.inc();
      // Said once when reconciling starts failing, not every second: the counter and the probe tell the rest.
      if (this.lastError === undefined) this.deps.log.warn({ err }, 'unable to reconcile the BGP speaker with the mitigation ledger; trying again every interval');
      this.lastError = (err as Error).message;
    }
  }

  /** Another process holds the lease: a pass as soon as it may have expired, if that comes before the interval. */
  private standBy(): void {
    this.passed(true);
    const at = this.deps.lease.retryAt();
    const now = (this.deps.now ?? Date.now)();
    clearTimeout(this.nextTry);
    if (at === undefined || at - now >= this.config.intervalMs) return;
    this.nextTry = setTimeout(() => void this.rounds.runFresh(), Math.max(0, at - now));
    this.nextTry.unref();
  }

  private passed(standingBy: boolean): void {
    this.lastSuccess = (this.deps.now ?? Date.now)();
    this.lastError = undefined;
    this.standingBy = standingBy;
  }

  private async ensureNeighbours(failed: string[]): Promise<void> {
    // No neighbour without the policy: a router's routes would otherwise reach the other routers.
    if (!(await this.ensureOwnRoutesOnly(failed))) return;
    const present = new Set((await this.deps.speaker.neighbours()).map((n) => n.address));
    for (const n of this.config.neighbours) {
      if (present.has(n.address)) continue;
      await this.change('neighbour_added', { neighbour: n.address, asn: n.asn }, () => this.deps.speaker.addNeighbour(n), failed);
    }
  }

  /** The speaker's policy that only its own routes enter and leave it (BgpSpeaker.keepOwnRoutesOnly); false when it could not be made sure. */
  private async ensureOwnRoutesOnly(failed: string[]): Promise<boolean> {
    try {
      if (await this.deps.speaker.keepOwnRoutesOnly()) {
        this.metrics.changes.inc({ change: 'routing_policy_set' });
        this.deps.log.info({ change: 'routing_policy_set' }, 'made the BGP speaker take and pass on only its own routes');
      }
      return true;
    } catch (err) {
      this.metrics.changeFailures.inc({ change: 'routing_policy_set' });
      failed.push(`routing_policy_set: ${(err as Error).message}`);
      return false;
    }
  }

  /**
   * One change to the speaker; one that fails is counted and named, and the
   * others are still made. The lease is renewed right before it: a process
   * that lost it (or cannot renew it) stops the pass here, changing nothing.
   */
  private async change(kind: 'neighbour_added' | 'announced' | 'withdrawn', what: object, work: () => Promise<void>, failed: string[]): Promise<void> {
    await this.deps.lease.fence();
    try {
      await work();
      this.metrics.changes.inc({ change: kind });
      this.deps.log.info({ ...what, change: kind }, 'made the BGP speaker match the mitigation ledger');
    } catch (err) {
      this.metrics.changeFailures.inc({ change: kind });
      failed.push(`${kind}: ${(err as Error).message}`);
    }
  }

  private async matchRoutes(failed: string[]): Promise<void> {
    const now = (this.deps.now ?? Date.now)();
    const { records, unreadable } = await this.deps.ledger.all(now);
    this.report(unreadable);
    this.passAtNextChange(records, now);
    const desired = new Map<string, Mitigation>();
    let refused = unreadable.length;
    const approved = await this.approvedNow(records.filter((r) => isActive(r, now)), failed);
    for (const record of records.filter((r) => isActive(r, now))) {
      const m = announceable(record.mitigation);
      if (!m) refused += 1;
      else if (await this.stillApproved(record, m, approved, now, failed)) desired.set(mitigationKey(m), m);
    }
    this.metrics.unreadable.set(refused);
    for (const record of records.filter((r) => endOf(r) < now - this.config.keepEndedMs)) {
      await this.deps.ledger.remove(record.org_id, record.id).catch((err: unknown) => failed.push(`forget ${record.id}: ${(err as Error).message}`));
    }
    const announced = new Map((await this.deps.speaker.announced()).map((m) => [mitigationKey(m), m]));
    // Withdrawals first: a route past its end leaves before anything new is sent.
    for (const [key, m] of announced) {
      if (!desired.has(key)) await this.change('withdrawn', { mitigation: m }, () => this.deps.speaker.withdraw(m), failed);
    }
    for (const [key, m] of desired) {
      if (!announced.has(key)) await this.change('announced', { mitigation: m }, () => this.deps.speaker.announce(m), failed);
    }
  }

  /** Each refused entry once: an error log (an operator looks at the bucket and the audit ledger) and a count by kind. */
  private report(unreadable: UnreadableEntry[]): void {
    const now = new Set(unreadable.map((u) => `${u.key} ${u.reason}`));
    for (const u of unreadable) {
      if (this.reported.has(`${u.key} ${u.reason}`)) continue;
      this.metrics.refused.inc({ kind: refusalKind(u.reason) });
      this.deps.log.error({ key: u.key, reason: u.reason }, 'refused a mitigation ledger entry; nothing of it is announced');
    }
    this.reported = now;
  }

  /** The approved prefixes of each workspace with an active record; a workspace whose prefixes cannot be read is left out (see stillApproved). */
  private async approvedNow(active: readonly MitigationRecord[], failed: string[]): Promise<Map<string, readonly string[]>> {
    const approved = new Map<string, readonly string[]>();
    for (const orgId of new Set(active.map((r) => r.org_id))) {
      try {
        approved.set(orgId, await this.deps.approvedPrefixes(orgId));
      } catch (err) {
        failed.push(`approved prefixes of ${orgId}: ${(err as Error).message}`);
      }
    }
    return approved;
  }

  /**
   * Whether an active mitigation still lies within a prefix approved for its
   * workspace. One that does not (the platform admin revoked the prefix, or
   * the workspace removed it) is withdrawn in the ledger, for good, as a
   * person's withdrawal is. A workspace whose prefixes could not be read
   * keeps its routes for this pass: they were approved when decided, and a
   * store that does not answer must not take every mitigation down.
   */
  private async stillApproved(record: MitigationRecord, m: Mitigation, approved: Map<string, readonly string[]>, now: number, failed: string[]): Promise<boolean> {
    const prefixes = approved.get(record.org_id);
    if (!prefixes) return true;
    const destination = mitigationDestination(m);
    const cidr = destination.includes('/') ? destination : `${destination}/${destination.includes(':') ? 128 : 32}`;
    if (prefixes.some((p) => prefixWithin(cidr, p))) return true;
    try {
      await this.deps.ledger.withdraw(record.org_id, record.id, now);
      this.metrics.unapproved.inc();
      this.deps.log.warn({ org_id: record.org_id, mitigation_id: record.id, destination }, 'withdrew a mitigation outside the prefixes approved for its workspace');
    } catch (err) {
      failed.push(`withdraw ${record.id} (outside the approved prefixes): ${(err as Error).message}`);
    }
    return false;
  }
}
