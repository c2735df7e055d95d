import { createHmac, hkdfSync, timingSafeEqual } from 'node:crypto';
import type { KV } from 'nats';
import { BucketCopy } from './bucket-copy';
import { OpenedBucket } from './kv-bucket';
import type { NatsClient } from './nats-client';
import { names } from './names';

/** One mitigation the service decided on, as the ledger keeps it: the desired state the speaker is made to match. */
export interface MitigationRecord {
  id: string;
  org_id: string;
  /** What to announce (workers/mitigation/mitigations.ts): checked again before it reaches the speaker. */
  mitigation: unknown;
  /** Epoch ms: announced from `starts_at` until `ends_at`, unless withdrawn before. */
  starts_at: number;
  ends_at: number;
  withdrawn_at?: number;
}

/** What the bucket holds: a record, the revision it was written at, and the service's signature of both. */
type SignedRecord = MitigationRecord & { revision: number; mac: string };

/** A ledger entry that is not a record (written by something else than this service): never announced. */
export interface UnreadableEntry {
  key: string;
  reason: string;
}

const keyOf = (orgId: string, id: string) => `${orgId}.${id}`;
/** Why an entry the service signed for another revision is refused (the reconciler reports the kinds apart). */
export const replayedReason = 'it was written again after a later write';
/** Why a record is reported that is gone before its end without the service forgetting it. */
export const vanishedReason = 'it vanished before its end';
const idPattern = /^[A-Za-z0-9_-]{1,128}$/;

/**
 * The service's record of mitigations, in a JetStream key-value bucket
 * (`<PREFIX>_MITIGATIONS`, replicated as the streams are): what should be
 * announced now. Automation runs write it; the reconciler reads it whole and
 * makes the BGP speaker match it, after any crash of either. Entries read back
 * are input from outside the process: each record is signed (HMAC-SHA256, a
 * key derived from the decision signing key, which NATS never holds), and one
 * that is not a well-formed record with a valid signature is reported, never
 * trusted: write access to the bucket is not enough to announce a route. The
 * signature binds the entry's revision (each write lands at the revision it
 * signed, or is not made), so an entry of before a withdrawal put back is
 * refused as a replay; a record that vanishes before its end (a purge) is
 * reported as a gap.
 */
export class MitigationLedger {
  private readonly opened = new OpenedBucket('the mitigation ledger');
  /** The entries as a watch keeps them: the reconciler reads the ledger every second, and each automation run counts its active mitigations. */
  private copy?: BucketCopy;
  private readonly macKey?: Buffer;
  /** Records this process read and has not forgotten itself, by key: one gone from the bucket before its end is a gap. */
  private readonly known = new Map<string, MitigationRecord>();

  /** `signingKey`: the service's decision signing key; without it (the topology job) the ledger can be made, not read or written. */
  constructor(private readonly deps: { nats: NatsClient; prefix: string; replicas: number; signingKey?: string }) {
    if (deps.signingKey) this.macKey = Buffer.from(hkdfSync('sha256', deps.signingKey, 'nettel', 'mitigation ledger v2', 32));
  }

  async start(): Promise<void> {
    const bucket = names(this.deps.prefix).mitigationsBucket;
    const kv = await this.opened.open(this.deps.nats, bucket, { history: 1, replicas: this.deps.replicas });
    // Only a ledger that reads (it has the signing key) keeps a copy; the topology job only makes the bucket.
    if (!this.macKey) return;
    this.copy = new BucketCopy(kv, async () => (await this.deps.nats.jsm.streams.info(`KV_${bucket}`)).state.last_seq);
    await this.copy.start();
  }

  stop(): Promise<void> {
    this.copy?.stop();
    this.copy = undefined;
    return Promise.resolve();
  }

  private get bucket(): KV {
    return this.opened.bucket;
  }

  /**
   * Writes a record. A withdrawal is final: a record already withdrawn keeps
   * its withdrawal whatever is written over it (a late retry of an
   * announcement, an extension racing a withdrawal), so nothing this ledger
   * once withdrew is announced again. Compare-and-set on the entry's revision,
   * so a withdrawal in between is never lost.
   */
  async put(record: MitigationRecord): Promise<void> {
    if (!idPattern.test(record.id) || !idPattern.test(record.org_id)) throw new Error('a mitigation record needs ids of letters, digits, _ and -');
    await this.write(keyOf(record.org_id, record.id), (existing) => {
      const withdrawnAt = existing?.withdrawn_at !== undefined ? Math.min(existing.withdrawn_at, record.withdrawn_at ?? existing.withdrawn_at) : record.withdrawn_at;
      return { ...record, ...(withdrawnAt === undefined ? {} : { withdrawn_at: withdrawnAt }) };
    });
  }

  /**
   * Writes what `next` makes of the entry's record at exactly the revision it
   * signs: the publish expects the bucket stream's last sequence it read, so
   * any write in between (of any key) makes it fail and it is made again.
   * `next` answers undefined to write nothing.
   */
  private async write(key: string, next: (existing: MitigationRecord | undefined) => MitigationRecord | undefined): Promise<void> {
    const bucket = names(this.deps.prefix).mitigationsBucket;
    for (let attempt = 0; ; attempt += 1) {
      const last = (await this.deps.nats.jsm.streams.info(`KV_${bucket}`)).state.last_seq;
      const entry = await this.bucket.get(key);
      const existing = entry && entry.operation === 'PUT' ? this.verified(entry.string(), entry.revision) : undefined;
      const record = next(typeof existing === 'object' ? existing : undefined);
      if (!record) return;
      try {
        await this.deps.nats.js().publish(`$KV.${bucket}.${key}`, this.signed(record, last + 1), { expect: { lastSequence: last }, timeout: 10_000 });
        return;
      } catch (err) {
        // Another writer wrote to the bucket since it was read: read it again, a few times.
        if (attempt >= 9) throw err;
      }
    }
  }

  private mac(record: MitigationRecord, revision: number): string {
    if (!this.macKey) throw new Error('the mitigation ledger has no signing key');
    const { id, org_id, mitigation, starts_at, ends_at, withdrawn_at } = record;
    return createHmac('sha256', this.macKey).update(JSON.stringify([id, org_id, mitigation, starts_at, ends_at, withdrawn_at ?? null, revision])).digest('base64url');
  }

  private signed(record: MitigationRecord, revision: number): string {
    const { id, org_id, mitigation, starts_at, ends_at, withdrawn_at } = record;
    return JSON.stringify({ id, org_id, mitigation, starts_at, ends_at, ...(withdrawn_at === undefined ? {} : { withdrawn_at }), revision, mac: this.mac(record, revision) });
  }

  /** A record from an entry's text at its revision, or why it is not one (its signature checked, for that revision). */
  private verified(text: string, revision: number): MitigationRecord | string {
    const record = recordOf(text);
    if (typeof record === 'string') return record;
    const given = Buffer.from(typeof (record as SignedRecord).mac === 'string' ? (record as SignedRecord).mac : '');
    const signedAt = (record as SignedRecord).revision;
    const matches = (at: number) => {
      const expected = Buffer.from(this.mac(record, at));
      return given.length === expected.length && timingSafeEqual(given, expected);
    };
    if (matches(revision)) return record;
    // A signature of the service for another revision: an entry of before written again, the withdrawal it had since undone.
    if (Number.isSafeInteger(signedAt) && signedAt !== revision && matches(signedAt)) return `${replayedReason} (signed for revision ${signedAt}, found at ${revision})`;
    return 'its signature does not verify';
  }

  /**
   * Marks a record withdrawn (kept, so the reconciler withdraws it even if it
   * was never seen announced). An entry that is no record of this service is
   * never announced anyway: it is left as it is.
   */
  async withdraw(orgId: string, id: string, at: number): Promise<void> {
    // An entry that is no record of this service (absent, deleted, unverified) is left as it is.
    await this.write(keyOf(orgId, id), (existing) => existing && { ...existing, withdrawn_at: Math.min(at, existing.withdrawn_at ?? at) });
  }

  /** Forgets a record (one long ended: the audit ledger keeps its history). */
  async remove(orgId: string, id: string): Promise<void> {
    this.known.delete(keyOf(orgId, id));
    await this.bucket.purge(keyOf(orgId, id));
  }

  /**
   * Every record, and the entries that are not records: forged, replayed,
   * or (a gap) a record this process read that is gone before its end
   * without this process forgetting it.
   */
  async all(now = Date.now()): Promise<{ records: MitigationRecord[]; unreadable: UnreadableEntry[] }> {
    const records: MitigationRecord[] = [];
    const unreadable: UnreadableEntry[] = [];
    const present = new Set<string>();
    for (const [key, text, revision] of (await this.copy?.entries()) ?? (await this.entriesRead())) {
      present.add(key);
      const record = this.verified(text, revision);
      if (typeof record === 'string') unreadable.push({ key, reason: record });
      else if (keyOf(record.org_id, record.id) !== key) unreadable.push({ key, reason: 'its key does not name its workspace and id' });
      else {
        records.push(record);
        this.known.set(key, record);
      }
    }
    for (const [key, record] of this.known) {
      if (present.has(key)) continue;
      if (endOf(record) > now) unreadable.push({ key, reason: vanishedReason });
      else this.known.delete(key);
    }
    return { records, unreadable };
  }

  /** Every entry holding a value, read from the bucket one request per key (while the watched copy cannot answer). */
  private async entriesRead(): Promise<Array<[string, string, number]>> {
    // Keys first, then each entry: nats.js's key listing ends early when the loop awaits a get between two keys.
    const keys: string[] = [];
    for await (const key of await this.bucket.keys()) keys.push(key);
    const out: Array<[string, string, number]> = [];
    for (const key of keys) {
      const entry = await this.bucket.get(key);
      if (entry && entry.operation === 'PUT') out.push([key, entry.string(), entry.revision]);
    }
    return out;
  }
}

/** A record from its JSON, or why it is not one (its signature not yet checked). */
function recordOf(text: string): MitigationRecord | string {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return 'not JSON';
  }
  const r = value as Partial<MitigationRecord> | null;
  if (!r || typeof r !== 'object') return 'not an object';
  if (typeof r.id !== 'string' || !idPattern.test(r.id) || typeof r.org_id !== 'string' || !idPattern.test(r.org_id)) return 'no valid id and workspace';
  if (!Number.isSafeInteger(r.starts_at) || !Number.isSafeInteger(r.ends_at)) return 'no valid starts_at and ends_at';
  if (r.withdrawn_at !== undefined && !Number.isSafeInteger(r.withdrawn_at)) return 'an invalid withdrawn_at';
  if (typeof r.mitigation !== 'object' || r.mitigation === null) return 'no mitigation';
  return r as MitigationRecord;
}

/** When a record stopped being active (its end, or its withdrawal if sooner). */
export const endOf = (r: MitigationRecord) => Math.min(r.ends_at, r.withdrawn_at ?? r.ends_at);

/** Whether a record should be announced at `now`. */
export const isActive = (r: MitigationRecord, now: number) => r.starts_at <= now && now < r.ends_at && (r.withdrawn_at === undefined || now < r.withdrawn_at);
