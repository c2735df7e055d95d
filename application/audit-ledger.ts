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
  /** Stores entries in one insert. */
  append(entries: readonly AuditEntry[]): Promise<void>;
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
  /** Moves the head to the last of `entries` (a batch chained after the head at `revision`), keeping the whole batch. */
  claim(orgId: string, entries: readonly AuditEntry[], revision: number | undefined): Promise<boolean>;
}

/** An append waiting for its org's next batch; its details made when it was asked (the person of the request then served). */
interface PendingAppend {
  event: AuditEvent;
  details: string;
  resolve(entry: AuditEntry): void;
  reject(err: unknown): void;
}

/** A batch holds at most this many entries, and stops growing past this many bytes of details (the head keeps it whole). */
const maxBatchEntries = 64;
const maxBatchDetailBytes = 256 * 1024;

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
 * processes appending at once still form one chain. Within a process the
 * appends of an org queue, and those that waited behind one another are
 * chained, claimed and stored together: one claim of the head and one insert
 * a batch. One at a time, an org's appends under load (about 0.2 s each on
 * chDB) made the automation runs of a burst wait for tens of seconds (bench,
 * 2026-11-30). ClickHouse keeps the entries for reading and verification.
 */
export class AuditLedger {
  private readonly pending = new Map<string, PendingAppend[]>();
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
    // Made here, in the caller's context: the drain runs in the context of the append that started it.
    const details = entryDetails(event);
    return new Promise((resolve, reject) => {
      const waiting = this.pending.get(event.orgId);
      if (waiting) return void waiting.push({ event, details, resolve, reject });
      this.pending.set(event.orgId, [{ event, details, resolve, reject }]);
      void this.drain(event.orgId);
    });
  }

  /** Appends the org's waiting events, a batch at a time, until none waits. */
  private async drain(orgId: string): Promise<void> {
    for (;;) {
      const batch = nextBatch(this.pending.get(orgId)!);
      if (!batch.length) return void this.pending.delete(orgId);
      try {
        const entries = await this.appendNow(orgId, batch);
        batch.forEach((p, i) => p.resolve(entries[i]!));
      } catch (err) {
        for (const p of batch) p.reject(err);
      }
    }
  }

  private async appendNow(orgId: string, batch: readonly PendingAppend[]): Promise<AuditEntry[]> {
    try {
      return await this.claimAndStore(orgId, batch);
    } catch (err) {
      // The change the entry records is already made: the caller learns the ledger is unavailable, not that it failed.
      throw err instanceof AppError ? err : unavailable('audit ledger', err);
    }
  }

  private async claimAndStore(orgId: string, batch: readonly PendingAppend[]): Promise<AuditEntry[]> {
    for (let attempt = 0; attempt < maxClaimAttempts; attempt += 1) {
      const head = await this.heads.read(orgId);
      if (head) await this.ensureStored(head);
      // An org with entries from before the heads existed starts from ClickHouse's last entry.
      const entries = this.chained(orgId, batch, head?.entry ?? (await this.repo.last(orgId)));
      if (!(await this.heads.claim(orgId, entries, head?.revision))) continue;
      await this.repo.append(entries);
      this.stored.set(orgId, entries.at(-1)!.seq);
      this.appends.inc(entries.length);
      return entries;
    }
    throw unavailable('audit ledger (too many concurrent appends)');
  }

  /** The batch's entries, each chained after the one before, the first after `last`. */
  private chained(orgId: string, batch: readonly PendingAppend[], last: AuditEntry | undefined): AuditEntry[] {
    const entries: AuditEntry[] = [];
    let previous = last;
    for (const { event, details } of batch) {
      const fields = { org_id: orgId, seq: (previous?.seq ?? 0) + 1, at: this.now(), actor: event.actor, action: event.action, target: event.target, details };
      previous = chainEntry(fields, previous?.hash ?? genesisHash, this.chainKey);
      entries.push(previous);
    }
    return entries;
  }

  /** Writes the head's batch if its appender died between claiming it and storing it (one insert stored all of it, or none). */
  private async ensureStored(head: AuditHead): Promise<void> {
    const { entry } = head;
    if (this.stored.get(entry.org_id) === entry.seq) return;
    if (!(await this.repo.has(entry.org_id, entry.seq))) await this.repo.append(head.entries);
    this.stored.set(entry.org_id, entry.seq);
  }

  /**
   * Whether the ledger holds an entry of this action on this target. The head
   * is stored first: an appender that died between claiming an entry and
   * storing it has still recorded it.
   */
  async recorded(orgId: string, action: string, target: string): Promise<boolean> {
    const head = await this.heads.read(orgId);
    if (head) await this.ensureStored(head);
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
      const head = await this.heads.read(orgId);
      const last = head?.entry;
      if (!last || (last.seq === position.seq - 1 && last.hash === position.prevHash)) return { valid: true, entries: checked, complete: true };
      // The head's batch past the stored entries, chained from where they end: its appender may write it at this very
      // moment too (the identical copy folds away on reading).
      const unstored = head.entries.filter((e) => e.seq >= position.seq);
      if (unstored[0]?.seq === position.seq && unstored[0].prev_hash === position.prevHash && verifyChain(unstored, this.chainKey, position).valid) {
        await this.repo.append(unstored);
        this.stored.set(orgId, last.seq);
        return { valid: true, entries: checked + unstored.length, complete: true };
      }
      // Appends landed while the ledger was read: read what came after, a few times at most.
      if (last.seq > position.seq && round < 3) continue;
      const reason = 'the ledger ends before its recorded head';
      return { valid: false, entries: checked, broken_at: position.seq, reason, complete: true };
    }
  }
}

/** Takes the next batch off the waiting appends: at most maxBatchEntries, and past maxBatchDetailBytes no more (one at least). */
function nextBatch(waiting: PendingAppend[]): PendingAppend[] {
  let count = 0;
  let bytes = 0;
  while (count < Math.min(waiting.length, maxBatchEntries) && (count === 0 || bytes + waiting[count]!.details.length <= maxBatchDetailBytes)) {
    bytes += waiting[count]!.details.length;
    count += 1;
  }
  return waiting.splice(0, count);
}
