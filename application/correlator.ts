import { correlate, correlationKey, type Incident } from '../core/correlation';
import { historyOf, inForce, rulesOfIncidents, widestWindowMs, type RulesHistory } from '../core/detection-rules';
import { revivedVersion, tombstoneVersion } from '../core/incident-version';
import { incidentAttack } from '../core/detection/incident-attack';
import { versionOfRule } from '../core/detection/version';
import { recomputeEvents, type EventAttack } from '../core/webhook-events';
import type { AttackWindowsRepo } from '../storage/attack-windows-repo';
import { counter, type Registry } from '../observability/metrics';
import type { IncidentsRepo } from '../storage/incidents-repo';
import type { SignalRuns } from '../storage/signal-runs';
import type { KeyOfSignal } from '../storage/telemetry-store';
import type { EventOutbox } from '../streams/outbox';
import type { DetectionRulesSource } from './detection-rules-service';

/** A correlation key whose signals changed, and the event time of its earliest new signal. */
export interface KeyChange extends KeyOfSignal {
  since: number;
}

/**
 * Recomputes the incidents of correlation keys from what ClickHouse holds,
 * through the pure engine. State lives in ClickHouse, not in a worker, so
 * several workers may touch one key; versions settle who wins (see below).
 *
 * Only the part of a key's history a change can reach is read again. It
 * starts at the key's own signals, not at stored incidents (which may lag
 * behind them): walking back from the earliest new signal while signals stay
 * within the correlation window of each other, and never before the last
 * resolution that ends before it. Incidents before that point opened and
 * closed on their own, so the engine run from there gives what a run over
 * all history would.
 *
 * Versions settle which computation of an incident wins: see core/incident-version.
 *
 * Rules: each incident is computed under the detection-rules version it
 * opened under (recorded as `rules_version`), a new one under the
 * workspace's rules in force, so a rule change reaches new incidents only.
 * Runs are walked back with the widest window any version has had, since an
 * older incident may keep a wider window than the rules in force.
 */

export class Correlator {
  constructor(
    private readonly deps: {
      /** The runs of signals a change reaches (storage/signal-runs.ts). */
      signals: Pick<SignalRuns, 'runsOfKeys'>;
      incidents: IncidentsRepo;
      registry: Registry;
      /** The workspaces' rules; the defaults for every workspace when absent. */
      rules?: DetectionRulesSource;
      now?: () => number;
      /** Where the notifications of incident changes go (the webhook outbox); none: no notifications. */
      events?: EventOutbox;
      /** The rate detectors' judged windows: events of an incident they opened carry its attack's type and peak rates. */
      attacks?: Pick<AttackWindowsRepo, 'ofTarget'>;
    },
  ) {
    this.incidentsWritten = counter(deps.registry, { name: 'nettel_incidents_written_total', help: 'Incident versions written by the correlator' });
  }

  private readonly incidentsWritten;

  async recompute(orgId: string, changes: KeyChange[]): Promise<Incident[]> {
    if (changes.length === 0) return [];
    const rules = await this.rulesOf(orgId);
    // Read side by side: neither needs the other.
    const [transitions, runs] = await Promise.all([this.deps.incidents.transitionsOfKeys(orgId, changes), this.deps.signals.runsOfKeys(orgId, changes, widestWindowMs(rules))]);
    const anchored = changes.map((change, i) => {
      const lastResolution = transitions
        .filter((t) => t.state === 'resolved' && correlationKey(t) === correlationKey({ org_id: orgId, ...change }) && t.through_ts < change.since)
        .reduce((m, t) => Math.max(m, t.through_ts + 1), 0);
      return { ...change, since: Math.max(runs[i]!.start, lastResolution) };
    });
    const anchors = new Map(anchored.map((a) => [correlationKey({ org_id: orgId, ...a }), a.since]));
    const earliest = anchored.reduce((m, a) => Math.min(m, a.since), Number.MAX_SAFE_INTEGER);
    const storedAll = await this.deps.incidents.ofKeys(orgId, changes, earliest);
    const signals = runs.flatMap((run, i) => run.signals.filter((s) => s.ts >= anchored[i]!.since));
    const inRange = storedAll.filter((i) => !i.superseded && i.first_seen >= anchors.get(correlationKey(i))!);
    const computed = correlate(signals, transitions, await this.rulesOfIncidents(orgId, rules, storedAll));
    const storedById = new Map(storedAll.map((i) => [i.id, i]));
    const computedIds = new Set(computed.map((i) => i.id));
    const writes: Array<{ incident: Incident; superseded: boolean }> = [];
    for (const incident of computed) {
      const before = storedById.get(incident.id);
      if (!before || incident.version > before.version) writes.push({ incident, superseded: false });
      // Back from a tombstone (signals arrived in an order that briefly moved its start): outrank the tombstone.
      else if (before.superseded) writes.push({ incident: { ...incident, version: revivedVersion(before.version) }, superseded: false });
    }
    // An incident whose first signal is no longer first (a late, earlier signal arrived) lives on under a new id.
    for (const before of inRange) {
      if (!computedIds.has(before.id)) writes.push({ incident: { ...before, version: tombstoneVersion(before.version) }, superseded: true });
    }
    const now = (this.deps.now ?? Date.now)();
    // Published before the write: a crash between them recomputes the same change, whose events (same ids) the outbox drops.
    // After the write, a recomputation would see no change and notify nobody.
    if (this.deps.events) {
      // Only a write that notifies anyone carries its attack: most writes of a rate incident move its last signal and notify nobody.
      const notified = new Set(recomputeEvents(writes, storedById, now).map((e) => e.subject));
      const attacks = await this.attacksOf(orgId, writes.filter((w) => notified.has(w.incident.id)).map((w) => w.incident));
      await this.deps.events.publish(recomputeEvents(writes, storedById, now, attacks));
    }
    await this.deps.incidents.write(writes, now);
    this.incidentsWritten.inc(writes.length);
    return computed;
  }

  /** The attack of each of these incidents a rate decision opened (its rule names a detector version), read from its judged windows. */
  private async attacksOf(orgId: string, incidents: readonly Incident[]): Promise<Map<string, EventAttack>> {
    const out = new Map<string, EventAttack>();
    if (!this.deps.attacks) return out;
    for (const incident of incidents) {
      if (versionOfRule(incident.rule) === undefined) continue;
      const attack = incidentAttack(await this.deps.attacks.ofTarget(orgId, incident.service, incident.first_seen + 1, incident.last_seen + 1));
      if (attack) out.set(incident.id, { type: attack.type, peak: attack.peak });
    }
    return out;
  }

  private rulesOf(orgId: string, through?: number): Promise<RulesHistory> {
    return this.deps.rules ? this.deps.rules.history(orgId, through) : Promise.resolve(historyOf([]));
  }

  /** Stored incidents keep the version they opened under; new ones take the rules in force. */
  private async rulesOfIncidents(orgId: string, rules: RulesHistory, stored: Incident[]) {
    const through = stored.reduce((m, i) => Math.max(m, i.rules_version), 0);
    const history = through > inForce(rules).version ? await this.rulesOf(orgId, through) : rules;
    return rulesOfIncidents(history, stored);
  }
}
