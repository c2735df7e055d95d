import { historyOf, inForce, atVersion, type DetectionRules, type RulesHistory, type VersionedRules } from '../core/detection-rules';
import { notFound } from '../core/errors';
import type { DetectionRulesRepo } from '../storage/detection-rules-repo';
import type { AuditLedger } from './audit-ledger';
import type { WithLock } from './exporter-service';
import { putNextVersion, sameDocument } from './versioned-document';
import { setNewest } from '../core/bounded-map';

/** Where the engine's callers get a workspace's rules: every version it has had, the last in force. */
export interface DetectionRulesSource {
  /**
   * The workspace's versions. `through`: a version the caller needs (an
   * incident recorded it); a cached copy that ends before it is read again.
   */
  history(orgId: string, through?: number): Promise<RulesHistory>;
}

export interface DetectionRulesCacheConfig {
  /** How long a workspace's versions are kept before they are read again. */
  ttlMs: number;
  /** Workspaces kept at most; the least recently read is dropped first. */
  maxWorkspaces: number;
}

/**
 * Two seconds: a change made through another process applies to data the
 * stream workers write from at most this long after it; on the process that
 * made the change it applies at once (the service hands it to this cache).
 */
export const defaultDetectionRulesCacheConfig: DetectionRulesCacheConfig = { ttlMs: 2_000, maxWorkspaces: 10_000 };

interface Entry {
  history: Promise<RulesHistory>;
  fetchedAt: number;
}

/**
 * The rules in force per workspace for the stream workers, the correlator
 * and replays, read from ClickHouse and kept for `ttlMs`. Versions never
 * change once written, so only the newest can be missing from a copy.
 * Concurrent readers of one workspace share one read.
 */
export class DetectionRulesCache implements DetectionRulesSource {
  private readonly entries = new Map<string, Entry>();

  constructor(
    private readonly config: DetectionRulesCacheConfig,
    private readonly deps: { repo: Pick<DetectionRulesRepo, 'versions'>; now?: () => number },
  ) {}

  private now(): number {
    return (this.deps.now ?? Date.now)();
  }

  async history(orgId: string, through?: number): Promise<RulesHistory> {
    const entry = this.entries.get(orgId);
    if (entry && this.now() - entry.fetchedAt < this.config.ttlMs) {
      const history = await entry.history;
      if (through === undefined || inForce(history).version >= through) return history;
    }
    return this.load(orgId);
  }

  /** Takes a version this process just wrote, so that it applies here at once. */
  remember(orgId: string, versions: VersionedRules[]): void {
    this.set(orgId, { history: Promise.resolve(historyOf(versions)), fetchedAt: this.now() });
  }

  private load(orgId: string): Promise<RulesHistory> {
    const history = this.deps.repo.versions(orgId).then(historyOf);
    this.set(orgId, { history, fetchedAt: this.now() });
    // A failed read is not kept: the next caller tries again.
    history.catch(() => {
      if (this.entries.get(orgId)?.history === history) this.entries.delete(orgId);
    });
    return history;
  }

  private set(orgId: string, entry: Entry): void {
    setNewest(this.entries, orgId, entry, this.config.maxWorkspaces);
  }
}

/**
 * Reads and sets a workspace's detection rules, a versioned document
 * (application/versioned-document.ts): a change is audited as
 * `detection_rules.update`; a change to the rules in force writes nothing.
 */
export class DetectionRulesService {
  constructor(
    private readonly deps: {
      repo: DetectionRulesRepo;
      cache: DetectionRulesCache;
      audit: AuditLedger;
      withLock: WithLock;
      now?: () => number;
    },
  ) {}

  /** The rules in force, read from ClickHouse (not the cache): version 0, the defaults, when none was set. */
  async get(orgId: string): Promise<VersionedRules> {
    const versions = await this.deps.repo.versions(orgId);
    this.deps.cache.remember(orgId, versions);
    return inForce(historyOf(versions));
  }

  /** One version, as incidents computed under it record it. */
  async version(orgId: string, version: number): Promise<VersionedRules> {
    const found = atVersion(historyOf(await this.deps.repo.versions(orgId)), version);
    if (!found) throw notFound('detection rules version');
    return found;
  }

  /** `startedFrom`: the version the caller edited; another one in force means a concurrent change, 409. */
  async put(orgId: string, actor: string, rules: DetectionRules, startedFrom?: number): Promise<VersionedRules> {
    let versions: VersionedRules[] = [];
    return putNextVersion(this.deps, { orgId, actor, startedFrom }, {
      name: 'the rules',
      lock: `detection-rules-${orgId}`,
      current: async () => {
        versions = await this.deps.repo.versions(orgId);
        return inForce(historyOf(versions));
      },
      sameAs: (current) => sameDocument(current.rules, rules),
      write: async (version) => {
        const next: VersionedRules = { version, rules, created_at: (this.deps.now ?? Date.now)(), actor };
        await this.deps.repo.put(orgId, next);
        this.deps.cache.remember(orgId, [...versions, next]);
        return next;
      },
      audit: { action: 'detection_rules.update', details: () => ({ rules }) },
    });
  }
}
