import { createHash } from 'node:crypto';
import { platformLedgerOrgId } from '../../core/ids';
import type { Person } from '../../core/person';
import type { WorkspacePrincipal } from '../../core/principal';
import type { Logger } from '../../observability/logger';
import { TokenBucket } from '../../core/token-bucket';
import { counter, type Registry } from '../../observability/metrics';
import type { AuditEvent } from '../audit-ledger';
import type { PersonAccess } from './person-access';
import { SignInFailure, type TokenVerifier } from './token-verifier';

/** A JWT in compact form: three base64url parts, a JSON header first (`eyJ` is `{"`). API keys never look so. */
const compactJwt = /^eyJ[A-Za-z0-9_-]*\.[A-Za-z0-9_-]*\.[A-Za-z0-9_-]*$/;

export const looksLikeJwt = (token: string) => compactJwt.test(token);

/**
 * Failed sign-ins this process audits a minute, whatever their addresses: a
 * refused token needs no credential, so the entries it writes are bounded
 * here, not only per client address (the failed-auth throttle), which many
 * addresses pass. The rest are counted and summed into the next entry.
 */
export const failureAuditsPerMinute = 60;

/**
 * The stable id a person's bearer credential goes by (the principal's
 * `keyId`, which audit entries name as actor): from the issuer and subject,
 * so that one person is one id across tokens and no subject's text, however
 * long or odd, becomes an id.
 */
export function bearerIdOf(issuer: string, person: Person): string {
  return `bearer:${createHash('sha256').update(`${issuer}\n${person.subject}`).digest('hex').slice(0, 16)}`;
}

/**
 * People's bearer tokens: a token of the OpenID provider, verified, becomes
 * the person's principal in the workspace the request names (or the only one
 * they hold), with the roles the workspace's group mappings give their groups.
 * A refused token is counted by reason and audited as a failed sign-in in the
 * platform's ledger (its claims name no workspace that can be trusted).
 */
export class BearerSignIn {
  private readonly failures;
  private readonly auditErrors;
  private readonly auditSuppressed;
  private readonly auditBudget = new TokenBucket(failureAuditsPerMinute / 60, failureAuditsPerMinute, Date.now());
  /** Failures not audited since the last entry: the next entry carries their number. */
  private suppressed = 0;

  constructor(
    private readonly deps: {
      issuer: string;
      verifier: Pick<TokenVerifier, 'verify'>;
      access: Pick<PersonAccess, 'accessIn'>;
      audit: { append(event: AuditEvent): Promise<unknown> };
      registry: Registry;
      log: Logger;
    },
  ) {
    this.failures = counter(deps.registry, { name: 'nettel_sign_in_failures_total', help: "People's tokens refused, by reason", labelNames: ['reason'] as const });
    this.auditErrors = counter(deps.registry, { name: 'nettel_sign_in_failure_audit_errors_total', help: 'Failed sign-ins that could not be written to the audit ledger' });
    this.auditSuppressed = counter(deps.registry, {
      name: 'nettel_sign_in_failure_audits_suppressed_total',
      help: `Failed sign-ins not audited one by one (over ${failureAuditsPerMinute} a minute in this process); the next entry counts them`,
    });
  }

  /** The OpenID provider whose tokens this accepts (the OpenAPI document names it as a security scheme). */
  get issuer(): string {
    return this.deps.issuer;
  }

  /**
   * The person's principal; 401 (a SignInFailure, counted) for a token that
   * does not verify, then 400/403 for the workspace. `chosenWorkspace` is read
   * only once the token verified: a stranger learns nothing of the header.
   */
  async authenticate(token: string, chosenWorkspace: () => string | undefined): Promise<WorkspacePrincipal> {
    let verified;
    try {
      verified = await this.deps.verifier.verify(token);
    } catch (err) {
      if (isSignInFailure(err)) this.failures.inc({ reason: err.reason });
      throw err;
    }
    const { orgId, roles } = await this.deps.access.accessIn(verified.groups, chosenWorkspace());
    return { kind: 'workspace', keyId: bearerIdOf(this.deps.issuer, verified.person), orgId, roles, person: verified.person, via: 'bearer' };
  }

  /**
   * Audits a refused token, once the failed-auth throttle let it through (so
   * a client failing in a loop writes at most its allowance) and within the
   * process's allowance of entries (failureAuditsPerMinute; past it, counted
   * and summed into the next entry as `suppressed`). A ledger that cannot be
   * written is counted and logged: the answer stays 401.
   */
  async recordFailure(failure: SignInFailure, client: string): Promise<void> {
    if (!this.auditBudget.take(1, Date.now()).ok) {
      this.suppressed += 1;
      this.auditSuppressed.inc();
      return;
    }
    const suppressed = this.suppressed;
    this.suppressed = 0;
    try {
      await this.deps.audit.append({
        orgId: platformLedgerOrgId,
        actor: 'anonymous',
        action: 'sign_in.failure',
        target: failure.reason,
        details: { via: 'bearer', reason: failure.reason, client, claimed: failure.claimed, ...(suppressed ? { suppressed } : {}) },
      });
    } catch (err) {
      this.auditErrors.inc();
      this.deps.log.warn({ err, reason: failure.reason }, 'failed sign-in not audited');
    }
  }
}

export const isSignInFailure = (err: unknown): err is SignInFailure => err instanceof SignInFailure;
