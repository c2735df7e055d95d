import { actorPersonOf, detailsOf, type AuditLedger } from '../../../application/audit-ledger';
import type { AuditEntry } from '../../../core/audit-chain';
import type { DecisionClaims, DecisionTokens } from '../../../core/decision-token';
import { roleAllows } from '../../../core/roles';
import { counter, type Registry } from '../../../observability/metrics';
import { personOfKey, type KeyRecord, type KeysRepo } from '../../../storage/keys-repo';
import { samePerson, type Person } from '../../../core/person';
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
  /** APPROVAL_POLICY_COOLDOWN_MINUTES: how long a person who changed a policy may not approve (or extend) runs under it; 0 turns the rule off. */
  policyCooldownMinutes?: number;
  now?: () => number;
}

/** How far before a decision the ledger is searched for its entry: wide enough for clocks that disagree. */
const lookBackMs = 5 * 60_000;
const pageSize = 200;

const refused = (reason: ApproverRefusal, message: string): ApproverVerdict => ({ ok: false, reason, message });

/** APPROVAL_POLICY_COOLDOWN_MINUTES by default. */
export const defaultPolicyCooldownMinutes = 60;

/** What the approver check judges, gathered by the activity: all of it read from storage or proven by the token. */
export interface ApproverFacts {
  /** The approver the decision token proved. */
  approver: Approver;
  /** The approver's key, for a decision taken with one; undefined when it does not exist (or for a person's token or session). */
  key?: KeyRecord;
  /** The person who requested the subject (for a run, who wrote the playbook version it follows); null for a service key or nobody; `unknown` for a sign-in whose person the subject did not record. */
  requester: Person | null | 'unknown';
  /** The approver's latest change to the workspace's policies within the cooldown, when there is one (asked for approvals and extensions). */
  policyChange?: { at: number; cooldownMinutes: number };
}

/**
 * Whether the approver may decide the subject (a replay, an automation run):
 * the same for a raw signal and the API's update. A key is checked again (it
 * may have been revoked since the API authenticated it); then four eyes
 * between persons: a service key stands for nobody and decides nothing, the
 * requester decides nothing of their own with any credential, and whoever
 * just changed the policies does not approve under them.
 */
export function approverVerdict(subject: DecisionSubject, facts: ApproverFacts, now: number): ApproverVerdict {
  const { approver } = facts;
  if (approver.approverVia === 'api_key') {
    const keyRefusal = keyVerdict(subject, facts.key, approver, now);
    if (keyRefusal) return keyRefusal;
  }
  const person = approver.approverPerson;
  if (!person) return refused('service_key', `${approver.approverKeyId || 'the credential'} is a service key: it stands for no person, and only a person may decide`);
  const named = person.name ? `${person.name} (${person.subject})` : person.subject;
  if (facts.requester === 'unknown') {
    return refused('requester', `the ${subject.kind} was requested through a sign-in whose person it did not record: nobody can be shown to be another person than its requester`);
  }
  if (samePerson(person, facts.requester)) {
    const who = subject.kind === 'replay' ? 'the person who requested it' : 'the person who wrote the playbook version it follows';
    return refused('requester', `a ${subject.kind} cannot be approved or denied by ${who}, with any of their credentials: ${named} is that person`);
  }
  if (facts.policyChange) {
    const { at, cooldownMinutes } = facts.policyChange;
    return refused(
      'policy_author',
      `${named} changed a policy of this workspace at ${new Date(at).toISOString()}: whoever changes the policies may not decide runs under them for ${cooldownMinutes} minutes (APPROVAL_POLICY_COOLDOWN_MINUTES); another person must decide`,
    );
  }
  return { ok: true };
}

/** A key's own refusal, if any. Another workspace's key is reported unknown, as the API reports another workspace's objects missing. */
function keyVerdict(subject: DecisionSubject, key: KeyRecord | undefined, approver: Approver, now: number): ApproverVerdict | undefined {
  const keyId = approver.approverKeyId;
  if (!key || key.org_id !== subject.orgId) return refused('unknown_key', `key ${keyId || '(none)'} is not a key of this workspace`);
  if (key.key_id === subject.requestedBy) {
    const who = subject.kind === 'replay' ? 'the key that requested it' : 'the key that wrote the playbook version it follows';
    return refused('requester', `a ${subject.kind} cannot be approved or denied with ${who}`);
  }
  if (key.revoked_at) return refused('revoked', `key ${keyId} is revoked`);
  if (key.expires_at && key.expires_at <= now) return refused('expired', `key ${keyId} has expired`);
  if (!roleAllows(key.role, 'approve')) return refused('not_an_approver', `key ${keyId} (role ${key.role}) may not approve`);
  // The API signed the person the key stands for; owners never change, so another one is no proof of it.
  if ((personOfKey(key)?.subject ?? null) !== (approver.approverPerson?.subject ?? null)) {
    return refused('invalid_token', `the decision names another person than the owner of key ${keyId}`);
  }
  return undefined;
}

/**
 * The facts of a decision whose token verified. `requester` is skipped for a
 * change that only makes things safer (withdrawing a run's mitigations): its
 * subject names no requester. The policy cooldown holds for what lets a run
 * act (`approve`, `extend`), not for what stops it (`deny`, `withdraw`).
 */
export async function approverFacts(deps: ApprovalActivityDeps, subject: DecisionSubject, approver: Approver, decision: DecisionClaims['decision'], now: number): Promise<ApproverFacts> {
  const key = approver.approverVia === 'api_key' && approver.approverKeyId ? await deps.keys.get(approver.approverKeyId) : undefined;
  const requester = subject.requestedBy === '' ? null : await requesterOf(deps, subject);
  const lets = decision === 'approve' || decision === 'extend';
  const policyChange = approver.approverPerson && lets ? await latestPolicyChange(deps, subject.orgId, approver.approverPerson, now) : undefined;
  return { approver, ...(key ? { key } : {}), requester, ...(policyChange ? { policyChange } : {}) };
}

/**
 * The requester's person: carried by the run, or (a run started before
 * persons) the requesting key's owner. A person's sign-in (`session:…`,
 * `bearer:…`) is no key: a run it requested without its person recorded
 * names a person nobody can tell apart from the approver, so it is refused.
 */
async function requesterOf(deps: ApprovalActivityDeps, subject: DecisionSubject): Promise<Person | null | 'unknown'> {
  if (subject.requesterPerson !== undefined) return subject.requesterPerson;
  if (subject.requestedBy.startsWith('session:') || subject.requestedBy.startsWith('bearer:')) return 'unknown';
  const key = await deps.keys.get(subject.requestedBy);
  return key && key.org_id === subject.orgId ? personOfKey(key) : null;
}

/** When `person` last created, changed or deactivated a policy of the workspace within the cooldown, read from the ledger (newest first). */
async function latestPolicyChange(deps: ApprovalActivityDeps, orgId: string, person: Person, now: number): Promise<ApproverFacts['policyChange']> {
  const cooldownMinutes = deps.policyCooldownMinutes ?? defaultPolicyCooldownMinutes;
  if (cooldownMinutes <= 0) return undefined;
  const since = now - cooldownMinutes * 60_000;
  const change = await newestEntry(deps, orgId, since, (e) => e.at >= since && e.action.startsWith('policy.') && actorPersonOf(e)?.subject === person.subject);
  return change ? { at: change.at, cooldownMinutes } : undefined;
}

/** The newest entry of the workspace's ledger that `matches`, read a page at a time, newest first, back to `since`. */
async function newestEntry(deps: Pick<ApprovalActivityDeps, 'audit'>, orgId: string, since: number, matches: (e: AuditEntry) => boolean): Promise<AuditEntry | undefined> {
  let beforeSeq: number | undefined;
  for (;;) {
    const page = await deps.audit.list(orgId, { limit: pageSize, beforeSeq });
    const found = page.find(matches);
    if (found) return found;
    const oldest = page[page.length - 1];
    if (!oldest || page.length < pageSize || oldest.at < since) return undefined;
    beforeSeq = oldest.seq;
  }
}

/**
 * Whether the ledger holds an entry `matches` finds: at its head (an append
 * that died between claiming and storing it), or among the entries appended
 * since `since`. A retried activity asks before it appends, so its retry
 * writes no second entry.
 */
export async function ledgerHolds(deps: Pick<ApprovalActivityDeps, 'audit' | 'heads'>, orgId: string, since: number, matches: (e: AuditEntry) => boolean): Promise<boolean> {
  const head = await deps.heads.read(orgId);
  if (head?.entries.some(matches)) return true;
  return (await newestEntry(deps, orgId, since, matches)) !== undefined;
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
    // A person no valid token vouches for is only what the sender claims: the entry names none.
    person: record.refusal?.reason === 'invalid_token' ? null : record.approverPerson,
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
      // The proof first: a key id is no secret, so without a token signed for this very decision nothing is even looked up.
      // For a person's token or session the signed person is the proof (the API checked their roles when it signed).
      const proof = deps.decisionTokens.verify(decisionToken, claimsOf(subject, workflowId, approver, decision), now());
      if (!proof.ok) return refused('invalid_token', proof.message);
      return approverVerdict(subject, await approverFacts(deps, subject, approver, decision, now()), now());
    },

    async auditDecision({ subject, record }) {
      const event = decisionEvent(subject, record);
      // A retried append (its first attempt timed out, or its worker died) finds the entry and writes no second one.
      const sameDecision = (e: AuditEntry) => e.action === event.action && e.target === event.target && attemptOf(e) === record.attempt;
      if (await ledgerHolds(deps, event.orgId, record.at - lookBackMs, sameDecision)) return;
      await deps.audit.append(event);
      if (record.refusal) refusals.inc({ kind: subject.kind, reason: record.refusal.reason, via: record.door });
    },
  };
}

const attemptOf = (entry: AuditEntry): unknown => detailsOf(entry).attempt;
