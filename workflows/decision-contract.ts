/**
 * What every workflow that waits for people shares with its activities: the
 * decision doors, the approver check and the audit of decisions. A replay and
 * an automation run are both decision subjects; both workflow files and
 * workers/governance/activities import this module.
 */
import type { Approval } from '../core/replay';
import type { Person } from '../core/person';
import type { Approver, CredentialKind } from '../core/principal';

export type { Approver } from '../core/principal';

/** What a decision is about: a replay or an automation run of a workspace, and who asked for it (the four-eyes rule's other person). */
export interface DecisionSubject {
  kind: 'replay' | 'automation';
  orgId: string;
  /** The replay's or the run's id: the target of its audit entries, and a claim of its decision tokens. */
  id: string;
  /** The key that asked for it (a replay's requester, the author of the playbook version a run follows): it may not decide it. */
  requestedBy: string;
  /** The person behind `requestedBy`; absent from runs started before persons (the worker then asks the key's owner). */
  requesterPerson?: Person | null;
}

export interface ApprovalInput {
  approverKeyId: string;
  /** Absent from a sender that predates persons: its decision token cannot verify then. */
  approverPerson?: Person | null;
  approverVia?: CredentialKind;
  comment?: string;
  /** The API's proof that it authenticated this approver for this decision (core/decision-token.ts); a decision without a valid one is refused. */
  decisionToken?: string;
}

export interface DecisionInput extends ApprovalInput {
  decision: 'approve' | 'deny';
}

/** Which door a decision came through: a raw Temporal signal, or the `decide` update the API sends. */
export type DecisionDoor = 'signal' | 'update';

/**
 * Why a decision was refused: it carries no valid decision token (none, forged, expired, or signed for another
 * run, key or decision), the key is unknown (or another workspace's), revoked, expired, lacks `approve`,
 * requested the run (the key, or the person with any credential), is a service key (no person), belongs to a person
 * who changed a policy of the workspace within the cooldown, or could not be checked.
 */
export type ApproverRefusal =
  | 'invalid_token'
  | 'unknown_key'
  | 'revoked'
  | 'expired'
  | 'not_an_approver'
  | 'requester'
  | 'service_key'
  | 'policy_author'
  | 'unverifiable';

export type ApproverVerdict = { ok: true } | { ok: false; reason: ApproverRefusal; message: string };

/** A decision the workflow received, as its audit entry records it. */
export interface DecisionRecord extends Approver {
  decision: 'approve' | 'deny';
  comment?: string;
  door: DecisionDoor;
  /** The n-th decision this subject received: with the subject's id it names the entry, so a retried append writes it once. */
  attempt: number;
  /** Workflow time when the decision arrived. */
  at: number;
  /** Why it was refused; absent for the decision taken. */
  refusal?: { reason: ApproverRefusal; message: string };
}

/** The part of a waiting workflow's state the approval step reads and writes. */
export interface GatedState {
  status: string;
  approvals: Approval[];
}

/** The approval step's side effects; implemented in workers/governance/activities/approval-activities.ts. */
export interface ApprovalActivities {
  /**
   * Whether a decision may be taken: its token proves the API authenticated this key for this decision of this
   * subject's workflow and has not expired, and the key exists in the subject's workspace, is active, may
   * `approve`, and did not request it.
   */
  checkApprover(args: { subject: DecisionSubject; workflowId: string; approver: Approver; decision: 'approve' | 'deny'; decisionToken?: string }): Promise<ApproverVerdict>;
  /** Appends `<kind>.approve`, `<kind>.deny` or, for a refused decision, `<kind>.decision_refused` to the workspace's ledger, once. */
  auditDecision(args: { subject: DecisionSubject; record: DecisionRecord }): Promise<void>;
}
