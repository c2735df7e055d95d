import { currentOf, type GroupMapping, type VersionedGroupMappings } from '../../core/group-mappings';
import type { SsoRepo } from '../../storage/sso-repo';
import type { AuditLedger } from '../audit-ledger';
import type { WithLock } from '../exporter-service';
import { putNextVersion, sameDocument } from '../versioned-document';

/** Every workspace's mappings in force, as person-access looks a person's groups up in them. */
export interface CurrentMappingsSource {
  current(): Promise<ReadonlyMap<string, VersionedGroupMappings>>;
}

/**
 * Three seconds: a mapping changed through another API process applies to
 * people's tokens at most this long after; on the process that made it, at once.
 */
export const mappingsCacheTtlMs = 3_000;

/**
 * The newest mappings of every workspace, read from ClickHouse at most once
 * per `ttlMs` (concurrent readers share one read; a failed read is not kept).
 */
export class CurrentMappingsCache implements CurrentMappingsSource {
  private cached?: { mappings: Promise<Map<string, VersionedGroupMappings>>; fetchedAt: number };

  constructor(
    private readonly deps: { repo: Pick<SsoRepo, 'currentMappings'>; ttlMs?: number; now?: () => number },
  ) {}

  private now(): number {
    return (this.deps.now ?? Date.now)();
  }

  current(): Promise<ReadonlyMap<string, VersionedGroupMappings>> {
    if (this.cached && this.now() - this.cached.fetchedAt < (this.deps.ttlMs ?? mappingsCacheTtlMs)) return this.cached.mappings;
    const mappings = this.deps.repo.currentMappings();
    const entry = { mappings, fetchedAt: this.now() };
    this.cached = entry;
    mappings.catch(() => {
      if (this.cached === entry) this.cached = undefined;
    });
    return mappings;
  }

  /** A version this process just wrote applies here at once. */
  async remember(orgId: string, written: VersionedGroupMappings): Promise<void> {
    const mappings = this.cached ? await this.cached.mappings.catch(() => undefined) : undefined;
    if (!mappings) return;
    mappings.set(orgId, written);
  }
}

/**
 * Reads and sets a workspace's group mappings. A change writes the next
 * version under a lock shared by every API process (two changes never take
 * one number), starting from the version the caller read (another one in
 * force is 409), and is audited as `sso.group_mappings.update`.
 */
export class GroupMappingsService {
  constructor(
    private readonly deps: { repo: SsoRepo; cache: CurrentMappingsCache; audit: AuditLedger; withLock: WithLock; now?: () => number },
  ) {}

  async get(orgId: string): Promise<VersionedGroupMappings> {
    return currentOf(await this.deps.repo.mappingVersions(orgId));
  }

  /** Every version, newest first. */
  async versions(orgId: string): Promise<VersionedGroupMappings[]> {
    return (await this.deps.repo.mappingVersions(orgId)).reverse();
  }

  async put(orgId: string, actor: string, mappings: GroupMapping[], startedFrom: number): Promise<VersionedGroupMappings> {
    return putNextVersion(this.deps, { orgId, actor, startedFrom }, {
      name: 'the group mappings',
      lock: `sso-group-mappings-${orgId}`,
      current: async () => currentOf(await this.deps.repo.mappingVersions(orgId)),
      sameAs: (current) => sameDocument(current.mappings, mappings),
      write: async (version) => {
        const next: VersionedGroupMappings = { version, mappings, created_at: (this.deps.now ?? Date.now)(), actor };
        await this.deps.repo.putMappings(orgId, next);
        await this.deps.cache.remember(orgId, next);
        return next;
      },
      audit: { action: 'sso.group_mappings.update', details: () => ({ mappings }) },
    });
  }
}
