import { canonicalJson } from '../core/canonical-json';
import { conflict } from '../core/errors';
import type { AuditLedger } from './audit-ledger';
import type { WithLock } from './exporter-service';

/**
 * A document a workspace changes as a whole (its detection rules, its
 * playbooks, its single sign-on group mappings): each change is the next
 * version, stored beside the ones before.
 */
export interface Versioned {
  version: number;
}

/** One change to a workspace's versioned document, as its service describes it. */
export interface DocumentChange<V extends Versioned> {
  /** The document as a conflict names it: 'the rules', 'the playbooks'. */
  name: string;
  /** The lock every API process takes to change this workspace's document, so two changes never take one number. */
  lock: string;
  /** The version in force, read under the lock. */
  current(): Promise<V>;
  /** Whether the proposed document equals a version's (compared as canonical JSON): a change to what is in force writes nothing. */
  sameAs(version: V): boolean;
  /** Builds and stores the next version. */
  write(version: number): Promise<V>;
  /** The audit entry's action, and what its details add to the version numbers. */
  audit: { action: string; details(written: V): Record<string, unknown> };
}

/** Whether two documents are equal as canonical JSON (key order aside). */
export const sameDocument = (a: unknown, b: unknown): boolean => canonicalJson(a) === canonicalJson(b);

/**
 * Writes the next version of a workspace's document, or nothing when it
 * equals the one in force. `startedFrom`: the version the caller edited;
 * another one in force means a concurrent change, 409. A written version is
 * audited (its number, the one before, and the change's details).
 */
export async function putNextVersion<V extends Versioned>(
  deps: { withLock: WithLock; audit: AuditLedger },
  target: { orgId: string; actor: string; startedFrom: number | undefined },
  change: DocumentChange<V>,
): Promise<V> {
  const { orgId, actor, startedFrom } = target;
  const { written, previous } = await deps.withLock(change.lock, async () => {
    const current = await change.current();
    if (startedFrom !== undefined && startedFrom !== current.version) {
      throw conflict(`${change.name} changed since version ${startedFrom}: version ${current.version} is in force; read it and edit that`);
    }
    if (change.sameAs(current)) return { written: undefined, previous: current };
    return { written: await change.write(current.version + 1), previous: current };
  });
  if (!written) return previous;
  const details = { version: written.version, previous_version: previous.version, ...change.audit.details(written) };
  await deps.audit.append({ orgId, actor, action: change.audit.action, target: `v${written.version}`, details });
  return written;
}
