import type { Person } from '../core/person';
/**
 * What the replay workflow and its activities share: the workflow's input
 * and state, and the activities' signatures. Both sides import this module,
 * so the workflow never reaches into workers/.
 */
import type { PolicyDecision } from '../core/policy';
import type { PlannedAction } from '../core/automation-plan';
import type { Approval, ReplayStatus, ReplayWindow } from '../core/replay';
import type { ApprovalActivities } from './decision-contract';

export interface ReplayInput {
  orgId: string;
  replayId: string;
  incidentId: string;
  requestedBy: string;
  /** The person behind `requestedBy` (null for a service key); absent from runs started before persons: the worker asks the key's owner. */
  requestedByPerson?: Person | null;
  requestedAt: number;
  /** Requested history window; the incident's span when absent. */
  windowMinutes?: number;
  /**
   * The window the request computed (the requested one, or the incident's
   * span and a correlation window on each side), so the states recorded before
   * the run prepares its own tell it; absent from runs started before it.
   */
  plannedWindowMinutes?: number;
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
    /** What the workspace's playbooks in force would do for the incident: each matching one's actions, previewed on the replay's window. */
    playbooks: ReplayedPlaybook[];
  };
  duration_ms: number;
}

/** A matching playbook's actions as a replay reports them; `refused` says why it could not act (no destination address). */
export interface ReplayedPlaybook {
  playbook_id: string;
  playbook_version: number;
  actions: Array<Pick<PlannedAction, 'type' | 'destination' | 'duration_minutes' | 'preview'>>;
  refused: string | null;
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

/** Every side effect of the replay workflow (its approval step's among them); implemented in workers/governance/activities. */
export interface ReplayActivities extends ApprovalActivities {
  /** Writes the workflow's state; the version is the workflow's step, so a late retry never overwrites a newer state. */
  recordReplayState(args: { input: ReplayInput; state: ReplayState; version: number }): Promise<void>;
  /** Loads the incident and evaluates the workspace's active policies as they are now. */
  prepareReplay(input: ReplayInput): Promise<PreparedReplay>;
  /** Re-runs detection and correlation on the incident's history and judges parity. */
  runReplay(args: { input: ReplayInput; window: ReplayWindow }): Promise<ReplayReport>;
}
