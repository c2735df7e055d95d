import type { AuditLedger } from '../../../application/audit-ledger';
import type { AuditEntry } from '../../../core/audit-chain';
import type { DecisionClaims, DecisionTokens } from '../../../core/decision-token';
import { roleAllows } from '../../../core/roles';
import { counter, type Registry } from '../../../observability/metrics';
import type { KeyRecord, KeysRepo } from '../../../storage/keys-repo';
import type { AuditHeads } from '../../../streams/audit-heads';
import type { ApprovalActivities, Approver, ApproverRefusal, ApproverVerdict, DecisionRecord, DecisionSubject } from '../../../workflows/decision-contract';

export interface ApprovalActivityDeps {
  keys: KeysRepo;
  /** Checks the token that proves the API authenticated the approver for this decision (DECISION_SIGNING_KEY). */
  decisionTokens: Pick<DecisionTokens, 'verify'>;
  audit: AuditLedger;
  /** The ledger's heads, read to find an entry whose append died between claiming and storing it. */
  heads: Pick<AuditHeads, 'read'>;
  registry: Registry;
  now?: () => number;
}

/** How far before a decision the ledger is searched for its entry: wide enough for clocks that disagree. */
const lookBackMs = 5 * 60_000;
const pageSize = 200;

const refused = (reason: ApproverRefusal, message: string): ApproverVerdict => ({ ok: false, reason, message });

/**
 * Whether `key` may decide the subject (a replay, an automation run): the
 * four-eyes rule and the roles table, the same for a raw signal and the API's
 * update. Another workspace's key is reported unknown, as the API reports
 * another workspace's objects missing.
 */
export function approverVerdict(key: KeyRecord | undefined, subject: DecisionSubject, keyId: string, now: number): ApproverVerdict {
  if (!key || key.org_id !== subject.orgId) return refused('unknown_key', `key ${keyId || '(none)'} is not a key of this workspace`);
  if (key.key_id === subject.requestedBy) {
    const who = subject.kind === 'replay' ? 'the key that requested it' : 'the key that wrote the playbook version it follows';
    return refused('requester', `a ${subject.kind} cannot be approved or denied with ${who}`);
  }
  if (key.revoked_at) return refused('revoked', `key ${keyId} is revoked`);
  if (key.expires_at && key.expires_at <= now) return refused('expired', `key ${keyId} has expired`);
  if (!roleAllows(key.role, 'approve')) return refused('not_an_approver', `key ${keyId} (role ${key.role}) may not approve`);
  return { ok: true };
}

/** What the API signed for this decision (core/decision-token.ts). */
export function claimsOf(subject: DecisionSubject, workflowId: string, approver: Approver, decision: DecisionClaims['decision'], detail?: string): DecisionClaims {
  return {
    orgId: subject.orgId,
    runId: subject.id,
    workflowId,
    approverKeyId: approver.approverKeyId,
    approverPerson: approver.approverPerson,
    via: approver.approverVia,
    decision,
    ...(detail === undefined ? {} : { detail }),
  };
}

/** The ledger entry of a decision: the one taken, or one refused. */
export function decisionEvent(subject: DecisionSubject, record: DecisionRecord) {
  const common = { via: record.door, attempt: record.attempt, ...(record.comment ? { comment: record.comment } : {}) };
  return {
    orgId: subject.orgId,
    actor: record.approverKeyId || 'unknown',
    action: record.refusal ? `${subject.kind}.decision_refused` : `${subject.kind}.${record.decision}`,
    target: subject.id,
    details: record.refusal ? { decision: record.decision, ...common, reason: record.refusal.reason, message: record.refusal.message } : common,
  };
}

/** Checking an approver's key and auditing decisions: the approval step's side effects, for replays and automation runs alike. */
export function createApprovalActivities(deps: ApprovalActivityDeps): ApprovalActivities {
  const now = deps.now ?? Date.now;
  const refusals = counter(deps.registry, {
    name: 'nettel_decisions_refused_total',
    help: 'Decisions on replays and automation runs (signals or updates) refused by the approver check, by subject, reason and door',
    labelNames: ['kind', 'reason', 'via'] as const,
  });

  return {
    async checkApprover({ subject, workflowId, approver, decision, decisionToken }) {
      // The proof first: a key id is no secret, so without a token signed for this very decision the key is not even looked up.
      const proof = deps.decisionTokens.verify(decisionToken, claimsOf(subject, workflowId, approver, decision), now());
      if (!proof.ok) return refused('invalid_token', proof.message);
      // A person's token or session: the signed person is the proof (the API checked the roles when it signed).
      if (approver.approverVia !== 'api_key') return { ok: true };
      // The key again: it may have been revoked, or have expired, since the API authenticated it.
      const key = approver.approverKeyId ? await deps.keys.get(approver.approverKeyId) : undefined;
      return approverVerdict(key, subject, approver.approverKeyId, now());
    },

    async auditDecision({ subject, record }) {
      const event = decisionEvent(subject, record);
      // A retried append (its first attempt timed out, or its worker died) finds the entry and writes no second one.
      if (await alreadyAudited(deps, event, record.attempt, record.at - lookBackMs)) return;
      await deps.audit.append(event);
      if (record.refusal) refusals.inc({ kind: subject.kind, reason: record.refusal.reason, via: record.door });
    },
  };
}

/** Whether the ledger holds this decision's entry: at its head, or among the entries appended since `since`. */
async function alreadyAudited(deps: ApprovalActivityDeps, event: ReturnType<typeof decisionEvent>, attempt: number, since: number): Promise<boolean> {
  const matches = (e: AuditEntry) => e.action === event.action && e.target === event.target && attemptOf(e) === attempt;
  const head = await deps.heads.read(event.orgId);
  if (head && matches(head.entry)) return true;
  let beforeSeq: number | undefined;
  for (;;) {
    const page = await deps.audit.list(event.orgId, { limit: pageSize, beforeSeq });
    if (page.some(matches)) return true;
    const oldest = page[page.length - 1];
    if (!oldest || page.length < pageSize || oldest.at < since) return false;
    beforeSeq = oldest.seq;
  }
}

function attemptOf(entry: AuditEntry): unknown {
  try {
    return (JSON.parse(entry.details) as { attempt?: unknown }).attempt;
  } catch {
    return undefined;
  }
}
