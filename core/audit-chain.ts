import { createHash, createHmac } from 'node:crypto';

/**
 * The audit ledger is a hash chain per org: each entry's hash covers its
 * content and the previous entry's hash, so changing, removing or inserting
 * an entry breaks every hash after it.
 *
 * Entries are keyed: their hash is an HMAC-SHA256 under a key kept outside
 * the database (AUDIT_CHAIN_KEY), written `hmac:<hex>`, so whoever can write
 * the database cannot rebuild a consistent chain. Entries written before
 * keying (a bare SHA-256) still verify, but only as the chain's beginning:
 * an unkeyed entry after a keyed one breaks the chain, so a forger cannot
 * fall back to the unkeyed form.
 */
export interface AuditEntryContent {
  org_id: string;
  seq: number;
  at: number;
  actor: string;
  action: string;
  target: string;
  details: string;
}

export interface AuditEntry extends AuditEntryContent {
  prev_hash: string;
  hash: string;
}

export const genesisHash = '0'.repeat(64);

const keyedPrefix = 'hmac:';
const isKeyed = (hash: string) => hash.startsWith(keyedPrefix);

/** `key`: AUDIT_CHAIN_KEY; without one, the unkeyed form of entries written before keying. */
function hashEntry(content: AuditEntryContent, prevHash: string, key: string | undefined): string {
  const canonical = JSON.stringify([
    content.org_id,
    content.seq,
    content.at,
    content.actor,
    content.action,
    content.target,
    content.details,
    prevHash,
  ]);
  return key === undefined ? createHash('sha256').update(canonical).digest('hex') : keyedPrefix + createHmac('sha256', key).update(canonical).digest('hex');
}

export function chainEntry(content: AuditEntryContent, prevHash: string, key: string | undefined): AuditEntry {
  return { ...content, prev_hash: prevHash, hash: hashEntry(content, prevHash, key) };
}

export interface ChainVerdict {
  valid: boolean;
  entries: number;
  /** The seq of the first entry whose link or hash does not hold. */
  broken_at?: number;
  reason?: string;
}

export interface ChainPosition {
  /** The seq the next entry must carry. */
  seq: number;
  /** The hash the next entry must link to. */
  prevHash: string;
}

export const chainStart: ChainPosition = { seq: 1, prevHash: genesisHash };

/**
 * Checks entries given in seq order. `from` lets a long ledger be checked in
 * chunks: pass the position the previous chunk ended at.
 */
export function verifyChain(entries: readonly AuditEntry[], key: string | undefined, from: ChainPosition = chainStart): ChainVerdict & { next: ChainPosition } {
  let prevHash = from.prevHash;
  let expectedSeq = from.seq;
  const at = () => ({ seq: expectedSeq, prevHash });
  for (const entry of entries) {
    if (entry.seq !== expectedSeq) {
      return { valid: false, entries: entries.length, broken_at: expectedSeq, reason: 'sequence gap or duplicate', next: at() };
    }
    if (entry.prev_hash !== prevHash) {
      return { valid: false, entries: entries.length, broken_at: entry.seq, reason: 'link to previous entry broken', next: at() };
    }
    if (isKeyed(prevHash) && !isKeyed(entry.hash)) {
      return { valid: false, entries: entries.length, broken_at: entry.seq, reason: 'an unkeyed entry after a keyed one', next: at() };
    }
    if (isKeyed(entry.hash) && key === undefined) {
      return { valid: false, entries: entries.length, broken_at: entry.seq, reason: 'a keyed entry, and no AUDIT_CHAIN_KEY to check it', next: at() };
    }
    if (hashEntry(entry, entry.prev_hash, isKeyed(entry.hash) ? key : undefined) !== entry.hash) {
      return { valid: false, entries: entries.length, broken_at: entry.seq, reason: 'entry content does not match its hash', next: at() };
    }
    prevHash = entry.hash;
    expectedSeq += 1;
  }
  return { valid: true, entries: entries.length, next: at() };
}
