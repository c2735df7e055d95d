import type { AuditEntry } from '../../../core/audit-chain';
import type { Person } from '../../../core/person';
import type { AutomationInput } from '../../../workflows/automation-contract';
import { detailsOf } from '../../../application/audit-ledger';
import { ledgerHolds, type ApprovalActivityDeps } from './approval-activities';

/** One of a run's audit entries: `person` is the approver's, for a change an approver asked for; none for the run's own steps. */
interface RunEntry {
  actor: string;
  action: string;
  details: Record<string, unknown>;
  person?: Person | null;
}

/** How far before an extension's mitigations started the ledger is searched for its entry: clocks disagree. */
const retryLookBackMs = 5 * 60_000;

/**
 * Appends the run's entry unless the ledger records it already: an activity
 * retried after its append (its attempt timed out, or its worker died)
 * writes no second one. A run records each action once (AuditLedger.recorded),
 * but an extension, of which a run may have several: that one is told apart
 * by its new ends, searched back to its mitigations' start.
 */
export async function auditOnce(deps: Pick<ApprovalActivityDeps, 'audit' | 'heads'>, input: AutomationInput, entry: RunEntry, extension?: { since: number; ends: string }) {
  const sameExtension = (e: AuditEntry) => e.action === entry.action && e.target === input.automationId && extendedEnds(detailsOf(e)) === extension?.ends;
  const recorded = extension
    ? await ledgerHolds(deps, input.orgId, extension.since - retryLookBackMs, sameExtension)
    : await deps.audit.recorded(input.orgId, entry.action, input.automationId);
  if (recorded) return;
  const { actor, action, details, person } = entry;
  await deps.audit.append({ orgId: input.orgId, actor, action, target: input.automationId, details, ...(person === undefined ? {} : { person }) });
}

/** The mitigations an extension entry names, with their new ends: what tells two extensions of a run apart. */
export const extendedEnds = (details: Record<string, unknown>): string =>
  JSON.stringify(((details.mitigations ?? []) as Array<{ id?: unknown; ends_at?: unknown }>).map((m) => [m.id, m.ends_at]));

