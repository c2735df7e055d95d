import { chainEntry, chainStart, genesisHash, verifyChain, type AuditEntry, type ChainPosition, type ChainVerdict } from '../core/audit-chain';
import { AppError, unavailable } from '../core/errors';
import { counter, type Registry } from '../observability/metrics';
import { isPerson, type Person } from '../core/person';
import { personActing } from './acting-person';
import type { AuditHead } from '../streams/audit-heads';

export interface AuditEvent {
  orgId: string;
  /** Who: the key id of the caller, or `platform-admin`. */
  actor: string;
  /** What: a dotted verb such as `api_key.create`. */
  action: string;
  /** On what: the id of the object acted on. */
  target: string;
  details?: Record<string, unknown>;
  /**
   * The person behind the actor (null for a service key or the system); when absent, the person of the request
   * being served if the actor is its credential (application/acting-person.ts). Kept in the entry's details as
   * `actor_person`, so entries written before persons hash and verify as they did.
   */
  person?: Person | null;
}

/** The details key that holds the actor's person. */
export const actorPersonKey = 'actor_person';

/** The details an entry hashes: the event's, with the actor's person when one is known. */
export function entryDetails(event: AuditEvent): string {
  const person = event.person !== undefined ? event.person : personActing(event.actor);
  return JSON.stringify(person === undefined ? (event.details ?? {}) : { ...event.details, [actorPersonKey]: person });
}

/** An entry's details as an object; none when they do not parse as one (an entry is read from storage, so checked). */
export function detailsOf(entry: Pick<AuditEntry, 'details'>): Record<string, unknown> {
  try {
    const details: unknown = JSON.parse(entry.details);
    return details && typeof details === 'object' && !Array.isArray(details) ? (details as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

/** The actor's person an entry names; null when it names none (a service key, the system, or an entry written before persons). */
export function actorPersonOf(entry: Pick<AuditEntry, 'details'>): Person | null {
  const person = detailsOf(entry)[actorPersonKey];
  return isPerson(person) ? person : null;
}

/** Where entries are kept for reading and verification (AuditRepo); unit tests hand in a plain object. */
export interface AuditEntryStore {
  append(entry: AuditEntry): Promise<void>;
  last(orgId: string): Promise<AuditEntry | undefined>;
  has(orgId: string, seq: number): Promise<boolean>;
  /** Whether an entry of this action on this target is stored. */
  hasAction(orgId: string, action: string, target: string): Promise<boolean>;
  page(orgId: string, opts: { limit: number; beforeSeq?: number }): Promise<AuditEntry[]>;
  ascending(orgId: string, opts: { fromSeq: number; limit: number }): Promise<AuditEntry[]>;
}

/** The heads of the chains, moved by compare-and-set (AuditHeads). */
export interface AuditHeadStore {
  read(orgId: string): Promise<AuditHead | undefined>;
  claim(orgId: string, entry: AuditEntry, revision: number | undefined): Promise<boolean>;
}

const maxClaimAttempts = 50;

/**
 * A verification of part of a ledger: the verdict on the entries checked,
 * and, while the chain goes on past them, where the next call resumes.
 */
export interface LedgerVerdict extends ChainVerdict {
  /** The chain was checked to its recorded head (or found broken): nothing is left to check. */
  complete: boolean;
  /** Where the next call resumes when not complete. */
  next?: ChainPosition;
}

export interface VerifyRange {
  /** Where to resume (a previous call's `next`); the start of the chain by default. */
  from?: ChainPosition;
  /** Entries this call reads at most. */
  maxEntries: number;
}

/**
 * Appends audit entries chained by hash per org. Each append claims the next
 * seq by compare-and-set on the org's head in JetStream (AuditHeads), so API
 * processes appending at once still form one chain; within a process the
 * appends of an org also queue, so they rarely contend. ClickHouse keeps the
 * entries for reading and verification.
 */
export class AuditLedger {
  private readonly queues = new Map<string, Promise<unknown>>();
  /** The last seq this process knows ClickHouse holds, per org: spares the repair check. */
  private readonly stored = new Map<string, number>();

  private readonly appends;

  constructor(
    private readonly repo: AuditEntryStore,
    private readonly heads: AuditHeadStore,
    registry: Registry,
    /** AUDIT_CHAIN_KEY: entries are keyed with it (core/audit-chain); resolved at start. */
    private readonly chainKey: string | undefined,
    private readonly now: () => number = Date.now,
  ) {
    this.appends = counter(registry, { name: 'nettel_audit_appends_total', help: 'Audit ledger entries appended' });
  }

  append(event: AuditEvent): Promise<AuditEntry> {
    const previous = this.queues.get(event.orgId) ?? Promise.resolve();
    const appended = previous.catch(() => undefined).then(() => this.appendNow(event));
    this.queues.set(event.orgId, appended);
    void appended
      .finally(() => {
        if (this.queues.get(event.orgId) === appended) this.queues.delete(event.orgId);
      })
      .catch(() => undefined);
    return appended;
  }

  private async appendNow(event: AuditEvent): Promise<AuditEntry> {
    try {
      return await this.claimAndStore(event);
    } catch (err) {
      // The change the entry records is already made: the caller learns the ledger is unavailable, not that it failed.
      throw err instanceof AppError ? err : unavailable('audit ledger', err);
    }
  }

  private async claimAndStore(event: AuditEvent): Promise<AuditEntry> {
    for (let attempt = 0; attempt < maxClaimAttempts; attempt += 1) {
      const head = await this.heads.read(event.orgId);
      if (head) await this.ensureStored(head.entry);
      // An org with entries from before the heads existed starts from ClickHouse's last entry.
      const last = head?.entry ?? (await this.repo.last(event.orgId));
      const entry = chainEntry(
        {
          org_id: event.orgId,
          seq: (last?.seq ?? 0) + 1,
          at: this.now(),
          actor: event.actor,
          action: event.action,
          target: event.target,
          details: entryDetails(event),
        },
        last?.hash ?? genesisHash,
        this.chainKey,
      );
      if (!(await this.heads.claim(event.orgId, entry, head?.revision))) continue;
      await this.repo.append(entry);
      this.stored.set(event.orgId, entry.seq);
      this.appends.inc();
      return entry;
    }
    throw unavailable('audit ledger (too many concurrent appends)');
  }

  /** Writes the head entry if its appender died between claiming it and storing it. */
  private async ensureStored(entry: AuditEntry): Promise<void> {
    if (this.stored.get(entry.org_id) === entry.seq) return;
    if (!(await this.repo.has(entry.org_id, entry.seq))) await this.repo.append(entry);
    this.stored.set(entry.org_id, entry.seq);
  }

  /**
   * Whether the ledger holds an entry of this action on this target. The head
   * is stored first: an appender that died between claiming an entry and
   * storing it has still recorded it.
   */
  async recorded(orgId: string, action: string, target: string): Promise<boolean> {
    const head = await this.heads.read(orgId);
    if (head) await this.ensureStored(head.entry);
    return this.repo.hasAction(orgId, action, target);
  }

  list(orgId: string, opts: { limit: number; beforeSeq?: number }): Promise<AuditEntry[]> {
    return this.repo.page(orgId, opts);
  }

  /**
   * Re-reads an org's ledger from `range.from` (the start by default) and
   * re-checks every link and hash, at most `range.maxEntries` entries a call:
   * a longer ledger is checked over several calls, each resuming where the
   * last stopped. Once the stored entries end, it checks that they end at
   * the head JetStream holds, so entries cut off the end are found too. The
   * head is read after the entries; appends that landed meanwhile are read
   * and checked too, and one entry past the stored ones (an append in
   * flight, or one whose process died) is written from the head.
   */
  async verify(orgId: string, range: VerifyRange, chunk = 10_000): Promise<LedgerVerdict> {
    try {
      return await this.verifyNow(orgId, range, chunk);
    } catch (err) {
      throw err instanceof AppError ? err : unavailable('audit ledger', err);
    }
  }

  private async verifyNow(orgId: string, range: VerifyRange, chunk: number): Promise<LedgerVerdict> {
    let position = range.from ?? chainStart;
    let checked = 0;
    // From the start, the first read starts below seq 1, so an entry forged before the start is seen too.
    let fromSeq = range.from ? range.from.seq : 0;
    for (let round = 0; ; round += 1) {
      for (;;) {
        const limit = Math.min(chunk, range.maxEntries - checked);
        if (limit <= 0) return { valid: true, entries: checked, complete: false, next: position };
        const entries = await this.repo.ascending(orgId, { fromSeq, limit });
        const verdict = verifyChain(entries, this.chainKey, position);
        if (!verdict.valid) return { valid: false, entries: checked, broken_at: verdict.broken_at, reason: verdict.reason, complete: true };
        checked += entries.length;
        position = verdict.next;
        fromSeq = position.seq;
        if (entries.length < limit) break;
      }
      const head = (await this.heads.read(orgId))?.entry;
      if (!head || (head.seq === position.seq - 1 && head.hash === position.prevHash)) return { valid: true, entries: checked, complete: true };
      if (head.seq === position.seq && head.prev_hash === position.prevHash && verifyChain([head], this.chainKey, position).valid) {
        // Its appender may write it at this very moment too: the identical copy folds away on reading.
        await this.repo.append(head);
        this.stored.set(orgId, head.seq);
        return { valid: true, entries: checked + 1, complete: true };
      }
      // Appends landed while the ledger was read: read what came after, a few times at most.
      if (head.seq > position.seq && round < 3) continue;
      const reason = 'the ledger ends before its recorded head';
      return { valid: false, entries: checked, broken_at: position.seq, reason, complete: true };
    }
  }
}
