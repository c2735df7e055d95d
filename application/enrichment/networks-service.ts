import { NetworkTable, noNetworks, type Networks, type VersionedNetworks } from '../../core/enrichment/networks';
import { notFound } from '../../core/errors';
import { PeriodicRound } from '../../core/periodic-round';
import type { Logger } from '../../observability/logger';
import type { NetworksRepo } from '../../storage/enrichment/networks-repo';
import type { AuditLedger } from '../audit-ledger';
import type { WithLock } from '../exporter-service';
import { putNextVersion, sameDocument } from '../versioned-document';
import type { NetworkTables } from './address-enrichment';

/**
 * Every workspace's networks in force, for the ingest hot path, which may
 * not wait on ClickHouse: loaded at start, then checked every `refreshMs`
 * (one query for the latest version of each workspace, a read of those that
 * changed). A change made through this process applies at once; through
 * another, within `refreshMs`.
 */
export class NetworkTablesCache implements NetworkTables {
  private readonly tables = new Map<string, { version: number; table: NetworkTable }>();
  private readonly rounds: PeriodicRound;

  constructor(
    config: { refreshMs: number },
    private readonly deps: { repo: Pick<NetworksRepo, 'latestVersions' | 'atVersion'>; log: Logger },
  ) {
    this.rounds = new PeriodicRound(config.refreshMs, () => this.refresh().catch((err: unknown) => deps.log.error({ err }, 'unable to read the workspaces\' networks; the last ones read stay in use')));
  }

  async start(): Promise<void> {
    await this.refresh();
    this.rounds.start();
  }

  async stop(): Promise<void> {
    await this.rounds.stop();
  }

  tableOf(orgId: string): NetworkTable | undefined {
    return this.tables.get(orgId)?.table;
  }

  /** Takes a version this process just wrote, so that it applies here at once. */
  remember(orgId: string, v: VersionedNetworks): void {
    if ((this.tables.get(orgId)?.version ?? 0) <= v.version) this.tables.set(orgId, { version: v.version, table: new NetworkTable(v.networks) });
  }

  async refresh(): Promise<void> {
    for (const [orgId, version] of await this.deps.repo.latestVersions()) {
      if ((this.tables.get(orgId)?.version ?? 0) >= version) continue;
      const v = await this.deps.repo.atVersion(orgId, version);
      if (v) this.remember(orgId, v);
    }
  }
}

/**
 * Reads and sets a workspace's networks, a versioned document
 * (application/versioned-document.ts): a change is audited as
 * `networks.update`; a change to the networks in force writes nothing.
 */
export class NetworksService {
  constructor(private readonly deps: { repo: NetworksRepo; tables?: NetworkTablesCache; audit: AuditLedger; withLock: WithLock; now?: () => number }) {}

  async get(orgId: string): Promise<VersionedNetworks> {
    const versions = await this.deps.repo.versions(orgId);
    return versions[versions.length - 1] ?? noNetworks;
  }

  async version(orgId: string, version: number): Promise<VersionedNetworks> {
    if (version === 0) return noNetworks;
    const found = await this.deps.repo.atVersion(orgId, version);
    if (!found) throw notFound('networks version');
    return found;
  }

  /** `startedFrom`: the version the caller edited; another one in force means a concurrent change, 409. */
  async put(orgId: string, actor: string, doc: Networks, startedFrom?: number): Promise<VersionedNetworks> {
    return putNextVersion(this.deps, { orgId, actor, startedFrom }, {
      name: 'the networks',
      lock: `networks-${orgId}`,
      current: () => this.get(orgId),
      sameAs: (current) => sameDocument(current.networks, doc.networks),
      write: async (version) => {
        const next: VersionedNetworks = { version, networks: doc.networks, created_at: (this.deps.now ?? Date.now)(), actor };
        await this.deps.repo.put(orgId, next);
        this.deps.tables?.remember(orgId, next);
        return next;
      },
      audit: { action: 'networks.update', details: (written) => ({ networks: written.networks.length }) },
    });
  }
}
