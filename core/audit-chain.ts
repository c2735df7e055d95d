import { createHash } from 'node:crypto';

/**
 * The audit ledger is a hash chain per org: each entry's hash covers its
 * content and the previous entry's hash, so changing, removing or inserting
 * an entry breaks every hash after it.
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

function hashEntry(content: AuditEntryContent, prevHash: string): string {
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
  return createHash('sha256').update(canonical).digest('hex');
}

export function chainEntry(content: AuditEntryContent, prevHash: string): AuditEntry {
  return { ...content, prev_hash: prevHash, hash: hashEntry(content, prevHash) };
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
export function verifyChain(entries: readonly AuditEntry[], from: ChainPosition = chainStart): ChainVerdict & { next: ChainPosition } {
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
    if (hashEntry(entry, entry.prev_hash) !== entry.hash) {
      return { valid: false, entries: entries.length, broken_at: entry.seq, reason: 'entry content does not match its hash', next: at() };
    }
    prevHash = entry.hash;
    expectedSeq += 1;
  }
  return { valid: true, entries: entries.length, next: at() };
}
