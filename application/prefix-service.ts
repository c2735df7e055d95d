import { prefixWithin } from '../core/mitigation-policy';
import { conflict, notFound, validationError } from '../core/errors';
import { randomId } from '../core/ids';
import {
  canonicalPrefix,
  claimingStatuses,
  maxPrefixesPerWorkspace,
  prefixesOverlap,
  type PrefixStatus,
  type WorkspacePrefix,
} from '../core/workspace-prefix';
import type { PrefixesRepo } from '../storage/prefixes-repo';
import type { AuditLedger } from './audit-ledger';
import type { WithLock } from './exporter-service';

export interface PrefixInput {
  prefix: string;
  description?: string;
}

/** A pending declaration as the platform admin sees it: with another workspace's approved prefix it overlaps, if any. */
export interface PendingPrefix extends WorkspacePrefix {
  overlapsApproved?: Pick<WorkspacePrefix, 'org_id' | 'id' | 'prefix'>;
}

type Page = { limit: number; after?: { created_at: number; id: string } };

/**
 * Every check-then-write on prefixes runs under this one lock, in every API
 * process: an overlap spans workspaces and is no single key to lock, and
 * declarations and decisions are a person's pace, so one lock costs nothing
 * and keeps two overlapping approvals (or a decision and a removal writing
 * the same next version) from interleaving.
 */
const prefixesLock = 'workspace-prefixes';

function pendingOnly(p: WorkspacePrefix, verb: string): WorkspacePrefix {
  if (p.status !== 'pending') throw conflict(`only a pending prefix can be ${verb}; this one is ${p.status}`);
  return p;
}

/**
 * Declares and removes the prefixes a workspace may act on, and lets the
 * platform admin approve or reject declarations; every change is audited in
 * the prefix's workspace. A declaration is pending until approved, and its
 * answer says nothing of other workspaces: a prefix overlapping another
 * workspace's is declared like a free one, and simply cannot be approved
 * while the other's approved prefix overlaps it.
 */
export class PrefixService {
  constructor(
    private readonly deps: {
      prefixes: PrefixesRepo;
      audit: AuditLedger;
      withLock: WithLock;
      /** The destinations (CIDR) the workspace's mitigations hold announced now: a prefix holding one cannot be removed. */
      announced: (orgId: string) => Promise<string[]>;
      now?: () => number;
    },
  ) {}

  private now(): number {
    return (this.deps.now ?? Date.now)();
  }

  /** A workspace declares a prefix: 400 for a bad or too wide one, 409 for one it already holds or past its cap. */
  declare(orgId: string, actor: string, input: PrefixInput): Promise<WorkspacePrefix> {
    const canonical = canonicalPrefix(input.prefix);
    if ('error' in canonical) throw validationError('invalid prefix declaration', [{ path: 'prefix', message: canonical.error }]);
    return this.deps.withLock(prefixesLock, async () => {
      // Only the caller's own prefixes are looked at: whether another workspace holds one must not show.
      const own = await this.deps.prefixes.overlapping([canonical.prefix], { statuses: claimingStatuses, orgId });
      if (own.some((p) => p.prefix === canonical.prefix)) throw conflict(`this workspace has already declared ${canonical.prefix}`);
      const held = await this.deps.prefixes.count(orgId, claimingStatuses);
      if (held >= maxPrefixesPerWorkspace) {
        throw conflict(`the workspace has ${held} prefixes pending or approved, the most it may have (${maxPrefixesPerWorkspace}): remove one first`);
      }
      const now = this.now();
      const declared: WorkspacePrefix = {
        id: randomId('pfx'),
        org_id: orgId,
        prefix: canonical.prefix,
        description: input.description ?? '',
        status: 'pending',
        created_at: now,
        created_by: actor,
        updated_at: now,
        version: 1,
      };
      await this.deps.prefixes.put(declared);
      await this.deps.audit.append({ orgId, actor, action: 'prefix.declare', target: declared.id, details: { prefix: declared.prefix, description: declared.description } });
      return declared;
    });
  }

  async get(orgId: string, id: string): Promise<WorkspacePrefix> {
    const p = await this.deps.prefixes.get(orgId, id);
    if (!p) throw notFound('prefix');
    return p;
  }

  list(orgId: string, opts: Page & { status?: PrefixStatus }): Promise<WorkspacePrefix[]> {
    return this.deps.prefixes.list(orgId, opts);
  }

  /** The workspace's approved prefixes (CIDR): what its mitigations are bounded to. */
  approved(orgId: string): Promise<string[]> {
    return this.deps.prefixes.approved(orgId);
  }

  /**
   * A workspace withdraws one of its prefixes, pending or approved: from then
   * on nothing new acts within it. Refused (409) while a mitigation within it
   * is announced: withdraw it first, so the prefix is never approved for
   * another workspace while a route of this one is still on the routers.
   */
  remove(orgId: string, actor: string, id: string): Promise<WorkspacePrefix> {
    return this.deps.withLock(prefixesLock, async () => {
      const p = await this.get(orgId, id);
      if (!claimingStatuses.includes(p.status)) throw conflict(`the prefix is already ${p.status}`);
      const holding = (await this.deps.announced(orgId)).filter((d) => prefixWithin(d, p.prefix));
      if (holding.length) throw conflict(`mitigations within ${p.prefix} are announced (${holding.join(', ')}): withdraw them before removing the prefix`);
      return this.decide(p, actor, 'removed', 'prefix.remove');
    });
  }

  /** Every workspace's pending declarations, oldest first, each with an approved prefix of another workspace it overlaps: for the platform admin only. */
  async pending(opts: Page): Promise<PendingPrefix[]> {
    const rows = await this.deps.prefixes.pending(opts);
    const approved = await this.deps.prefixes.overlapping([...new Set(rows.map((p) => p.prefix))], { statuses: ['approved'] });
    return rows.map((p) => {
      const other = approved.find((a) => a.org_id !== p.org_id && prefixesOverlap(a.prefix, p.prefix));
      return { ...p, overlapsApproved: other && { org_id: other.org_id, id: other.id, prefix: other.prefix } };
    });
  }

  /**
   * The platform admin approves a pending declaration: from then on the
   * workspace's mitigations may act within it. Refused (409) while it
   * overlaps another workspace's approved prefix: no address is ever
   * approved for two workspaces.
   */
  approve(actor: string, id: string): Promise<WorkspacePrefix> {
    return this.deps.withLock(prefixesLock, async () => {
      const p = pendingOnly(await this.anyWorkspace(id), 'approved');
      const other = (await this.deps.prefixes.overlapping([p.prefix], { statuses: ['approved'] })).find((a) => a.org_id !== p.org_id);
      if (other) throw conflict(`${p.prefix} overlaps ${other.prefix} (prefix ${other.id}), approved for workspace ${other.org_id}`);
      return this.decide(p, actor, 'approved', 'prefix.approve');
    });
  }

  /** The platform admin rejects a pending declaration: nothing will ever act within it. */
  reject(actor: string, id: string): Promise<WorkspacePrefix> {
    return this.deps.withLock(prefixesLock, async () => this.decide(pendingOnly(await this.anyWorkspace(id), 'rejected'), actor, 'rejected', 'prefix.reject'));
  }

  /**
   * The platform admin takes back an approval: from then on nothing new acts
   * within the prefix, and the mitigation reconciler withdraws the
   * workspace's active mitigations within it at its next pass (it re-checks
   * every active one against the approved prefixes). Unlike a removal it is
   * not refused while mitigations are announced: stopping them is its point.
   * 409 for a prefix that is not approved.
   */
  revoke(actor: string, id: string): Promise<WorkspacePrefix> {
    return this.deps.withLock(prefixesLock, async () => {
      const p = await this.anyWorkspace(id);
      if (p.status !== 'approved') throw conflict(`only an approved prefix can be revoked; this one is ${p.status}`);
      return this.decide(p, actor, 'revoked', 'prefix.revoke');
    });
  }

  private async anyWorkspace(id: string): Promise<WorkspacePrefix> {
    const p = await this.deps.prefixes.byId(id);
    if (!p) throw notFound('prefix');
    return p;
  }

  /** Writes the prefix's next version in `status` and audits it in the prefix's workspace. */
  private async decide(p: WorkspacePrefix, actor: string, status: PrefixStatus, action: string): Promise<WorkspacePrefix> {
    const next: WorkspacePrefix = { ...p, status, updated_at: this.now(), version: p.version + 1 };
    await this.deps.prefixes.put(next);
    await this.deps.audit.append({ orgId: p.org_id, actor, action, target: p.id, details: { prefix: p.prefix } });
    return next;
  }
}
