/**
 * What the replay workflow and its activities share: the workflow's input
 * and state, and the activities' signatures. Both sides import this module,
 * so the workflow never reaches into workers/.
 */
import type { PolicyDecision } from '../core/policy';
import type { Approval, ReplayStatus, ReplayWindow } from '../core/replay';

export interface ReplayInput {
  orgId: string;
  replayId: string;
  incidentId: string;
  requestedBy: string;
  requestedAt: number;
  /** Requested history window; the incident's span when absent. */
  windowMinutes?: number;
}

export interface ApprovalInput {
  approverKeyId: string;
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
 * replay, key or decision), the key is unknown (or another workspace's), revoked, expired, lacks `approve`,
 * requested the replay, or could not be checked.
 */
export type ApproverRefusal = 'invalid_token' | 'unknown_key' | 'revoked' | 'expired' | 'not_an_approver' | 'requester' | 'unverifiable';

export type ApproverVerdict = { ok: true } | { ok: false; reason: ApproverRefusal; message: string };

/** A decision the workflow received, as its audit entry records it. */
export interface DecisionRecord {
  decision: 'approve' | 'deny';
  approverKeyId: string;
  comment?: string;
  door: DecisionDoor;
  /** The n-th decision this replay received: with the replay id it names the entry, so a retried append writes it once. */
  attempt: number;
  /** Workflow time when the decision arrived. */
  at: number;
  /** Why it was refused; absent for the decision taken. */
  refusal?: { reason: ApproverRefusal; message: string };
}

export interface ReplayState {
  status: ReplayStatus;
  approvals: Approval[];
  error: { code: string; message: string } | null;
  report: ReplayReport | null;
  window_minutes: number;
  /** When the approval gate closes (workflow time, epoch ms); absent until the replay awaits a decision. */
  decision_deadline?: number;
  /** The policies that asked for approval; absent until the replay awaits a decision. */
  approval_policies?: string[];
}

/** What a replay found: parity field by field, and what its automation would do. */
export interface ReplayReport {
  parity: boolean;
  differences: Array<{ field: string; recorded: unknown; replayed: unknown }>;
  recorded: IncidentSummary;
  replayed: IncidentSummary | null;
  automation: {
    window: { from: string; to: string; minutes: number };
    flows_examined: number;
    bytes_examined: number;
    signals_examined: number;
    actions: Array<{ action: 'rate_limit'; src_ip: string; dst_ip: string; bytes: number; flows: number }>;
  };
  duration_ms: number;
}

export interface IncidentSummary {
  id: string;
  severity: string;
  state: string;
  signal_count: number;
  first_seen: string;
  last_seen: string;
  kinds: string[];
  rule: string;
  escalations: string[];
}

export interface PreparedReplay {
  decision: PolicyDecision;
  deniedMessage: string;
  window: ReplayWindow;
}

/** Every side effect of the replay workflow; implemented in workers/governance/activities. */
export interface ReplayActivities {
  /** Writes the workflow's state; the version is the workflow's step, so a late retry never overwrites a newer state. */
  recordReplayState(args: { input: ReplayInput; state: ReplayState; version: number }): Promise<void>;
  /** Loads the incident and evaluates the workspace's active policies as they are now. */
  prepareReplay(input: ReplayInput): Promise<PreparedReplay>;
  /** Re-runs detection and correlation on the incident's history and judges parity. */
  runReplay(args: { input: ReplayInput; window: ReplayWindow }): Promise<ReplayReport>;
  /**
   * Whether a decision may be taken: its token proves the API authenticated this key for this decision of this
   * replay's workflow and has not expired, and the key exists in the replay's workspace, is active, may
   * `approve`, and did not request it.
   */
  checkApprover(args: { input: ReplayInput; workflowId: string; approverKeyId: string; decision: 'approve' | 'deny'; decisionToken?: string }): Promise<ApproverVerdict>;
  /** Appends `replay.approve`, `replay.deny` or, for a refused decision, `replay.decision_refused` to the workspace's ledger, once. */
  auditDecision(args: { input: ReplayInput; record: DecisionRecord }): Promise<void>;
}
