import type { SsoRepo, SsoRequirement } from '../../storage/sso-repo';
import type { AuditLedger } from '../audit-ledger';
import type { WithLock } from '../exporter-service';
import { setNewest } from '../../core/bounded-map';

/** Three seconds: a requirement set through another API process applies there at most this long after. */
const requirementCacheTtlMs = 3_000;
/** How long a requirement read before still answers while ClickHouse cannot be reached (as keys do: ingestion goes on). */
const staleIfErrorMs = 15 * 60_000;
const maxCachedWorkspaces = 10_000;

/** What a change of the requirement names; a field left out keeps its value. */
export type SsoRequirementChange = Partial<Pick<SsoRequirement, 'required' | 'person_keys_from_sign_in'>>;

/**
 * Whether the platform admin requires single sign-on of a workspace's
 * people: then the API refuses their keys in it (service keys keep working);
 * and whether keys owned by a person are minted only through that person's
 * own sign-in (so every person-owned key carries a provider subject).
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

  /** Whether people's keys are refused in the workspace; kept a few seconds (see current). */
  async isRequired(orgId: string): Promise<boolean> {
    return (await this.current(orgId)).required;
  }

  /** Whether keys owned by a person are minted only through that person's own sign-in in the workspace (see current). */
  async personKeysFromSignIn(orgId: string): Promise<boolean> {
    return (await this.current(orgId)).person_keys_from_sign_in;
  }

  /**
   * The workspace's requirement, kept a few seconds. While ClickHouse cannot
   * be reached, the last answer read within 15 minutes stands; with none, the
   * read's error (503) does.
   */
  private async current(orgId: string): Promise<SsoRequirement> {
    const cached = this.cache.get(orgId);
    if (cached && this.now() - cached.fetchedAt < requirementCacheTtlMs) return cached.requirement;
    const requirement = this.deps.repo.requirement(orgId);
    this.remember(orgId, requirement);
    try {
      return await requirement;
    } catch (err) {
      if (this.cache.get(orgId)?.requirement === requirement) this.cache.delete(orgId);
      const last = this.lastRead.get(orgId);
      if (last && this.now() - last.readAt < staleIfErrorMs) return last.requirement;
      throw err;
    }
  }

  /** Changes what `change` names (what it leaves out stays); an unchanged requirement writes nothing and audits nothing. */
  async set(orgId: string, actor: string, change: SsoRequirementChange): Promise<SsoRequirement> {
    const { written, previous } = await this.deps.withLock(`sso-requirement-${orgId}`, async () => {
      const current = await this.deps.repo.requirement(orgId);
      const required = change.required ?? current.required;
      const personKeysFromSignIn = change.person_keys_from_sign_in ?? current.person_keys_from_sign_in;
      if (current.required === required && current.person_keys_from_sign_in === personKeysFromSignIn) return { written: undefined, previous: current };
      const next: SsoRequirement = { required, person_keys_from_sign_in: personKeysFromSignIn, version: current.version + 1, updated_at: this.now(), actor };
      await this.deps.repo.putRequirement(orgId, next);
      this.remember(orgId, Promise.resolve(next));
      return { written: next, previous: current };
    });
    if (!written) return previous;
    const details = { required: written.required, person_keys_from_sign_in: written.person_keys_from_sign_in, version: written.version };
    await this.deps.audit.append({ orgId, actor, action: 'sso.requirement.update', target: orgId, details });
    return written;
  }

  private remember(orgId: string, requirement: Promise<SsoRequirement>): void {
    const fetchedAt = this.now();
    setNewest(this.cache, orgId, { requirement, fetchedAt }, maxCachedWorkspaces);
    requirement.then(
      (read) => {
        setNewest(this.lastRead, orgId, { requirement: read, readAt: fetchedAt }, maxCachedWorkspaces);
      },
      () => undefined,
    );
  }
}
