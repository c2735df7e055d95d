import type { SsoRepo, SsoRequirement } from '../../storage/sso-repo';
import type { AuditLedger } from '../audit-ledger';
import type { WithLock } from '../exporter-service';

/** Three seconds: a requirement set through another API process applies there at most this long after. */
const requirementCacheTtlMs = 3_000;
/** How long a requirement read before still answers while ClickHouse cannot be reached (as keys do: ingestion goes on). */
const staleIfErrorMs = 15 * 60_000;
const maxCachedWorkspaces = 10_000;

/**
 * Whether the platform admin requires single sign-on of a workspace's
 * people: then the API refuses their keys in it (service keys keep working).
 * Set by the platform admin and audited in the workspace's ledger, as its
 * exporter approvals are; read on every request of a person's key, so kept a
 * few seconds per workspace.
 */
export class SsoRequirements {
  private readonly cache = new Map<string, { requirement: Promise<SsoRequirement>; fetchedAt: number }>();
  /** The last requirement read of each workspace, kept through a failed read for `staleIfErrorMs`. */
  private readonly lastRead = new Map<string, { requirement: SsoRequirement; readAt: number }>();

  constructor(
    private readonly deps: { repo: Pick<SsoRepo, 'requirement' | 'putRequirement'>; audit: Pick<AuditLedger, 'append'>; withLock: WithLock; now?: () => number },
  ) {}

  private now(): number {
    return (this.deps.now ?? Date.now)();
  }

  /** Read from ClickHouse (not the cache): what the platform admin sees. */
  async get(orgId: string): Promise<SsoRequirement> {
    return this.deps.repo.requirement(orgId);
  }

  /**
   * Whether people's keys are refused in the workspace; kept a few seconds.
   * While ClickHouse cannot be reached, the last answer read within 15
   * minutes stands; with none, the read's error (503) does.
   */
  async isRequired(orgId: string): Promise<boolean> {
    const cached = this.cache.get(orgId);
    if (cached && this.now() - cached.fetchedAt < requirementCacheTtlMs) return (await cached.requirement).required;
    const requirement = this.deps.repo.requirement(orgId);
    this.remember(orgId, requirement);
    try {
      return (await requirement).required;
    } catch (err) {
      if (this.cache.get(orgId)?.requirement === requirement) this.cache.delete(orgId);
      const last = this.lastRead.get(orgId);
      if (last && this.now() - last.readAt < staleIfErrorMs) return last.requirement.required;
      throw err;
    }
  }

  async set(orgId: string, actor: string, required: boolean): Promise<SsoRequirement> {
    const { written, previous } = await this.deps.withLock(`sso-requirement-${orgId}`, async () => {
      const current = await this.deps.repo.requirement(orgId);
      if (current.required === required) return { written: undefined, previous: current };
      const next: SsoRequirement = { required, version: current.version + 1, updated_at: this.now(), actor };
      await this.deps.repo.putRequirement(orgId, next);
      this.remember(orgId, Promise.resolve(next));
      return { written: next, previous: current };
    });
    if (!written) return previous;
    await this.deps.audit.append({ orgId, actor, action: 'sso.requirement.update', target: orgId, details: { required, version: written.version } });
    return written;
  }

  private remember(orgId: string, requirement: Promise<SsoRequirement>): void {
    const fetchedAt = this.now();
    this.cache.delete(orgId);
    this.cache.set(orgId, { requirement, fetchedAt });
    if (this.cache.size > maxCachedWorkspaces) this.cache.delete(this.cache.keys().next().value!);
    requirement.then(
      (read) => {
        this.lastRead.delete(orgId);
        this.lastRead.set(orgId, { requirement: read, readAt: fetchedAt });
        if (this.lastRead.size > maxCachedWorkspaces) this.lastRead.delete(this.lastRead.keys().next().value!);
      },
      () => undefined,
    );
  }
}
