import type { AppError } from '../../core/errors';
import { platformLedgerOrgId } from '../../core/ids';
import type { Person } from '../../core/person';
import type { Logger } from '../../observability/logger';
import { counter, type Registry } from '../../observability/metrics';
import type { AuditEvent } from '../audit-ledger';

/**
 * People's console sign-ins, in the platform's own ledger (`_platform`),
 * beside the refused bearer tokens: a sign-in belongs to no one workspace (a
 * person may hold several). A ledger that cannot be written is counted and
 * logged; the sign-in's answer does not change.
 */
export class ConsoleLedger {
  private readonly errors;

  constructor(private readonly deps: { audit: { append(event: AuditEvent): Promise<unknown> }; registry: Registry; log: Logger }) {
    this.errors = counter(deps.registry, { name: 'nettel_console_sign_in_audit_errors_total', help: 'Console sign-ins (and refused ones) that could not be written to the audit ledger' });
  }

  /** A person signed in: the session's credential id, and the workspaces their groups map to. */
  signedIn(credentialId: string, person: Person, workspaces: readonly string[]): Promise<void> {
    return this.append({ orgId: platformLedgerOrgId, actor: credentialId, person, action: 'sign_in.console', target: person.subject, details: { workspaces } });
  }

  /** A console sign-in refused at the callback: the provider's refusal, an answer that failed its checks, no mapped group. */
  refused(error: AppError, person: Person | null): Promise<void> {
    return this.append({
      orgId: platformLedgerOrgId,
      actor: 'anonymous',
      person,
      action: 'sign_in.failure',
      target: error.code,
      details: { via: 'console', message: error.message.slice(0, 300) },
    });
  }

  private async append(event: AuditEvent): Promise<void> {
    try {
      await this.deps.audit.append(event);
    } catch (err) {
      this.errors.inc();
      this.deps.log.warn({ err, action: event.action }, 'console sign-in not audited');
    }
  }
}
