/**
 * What the automation workflow and its activities share: a run's input and
 * state, and the activities' signatures. A run follows one version of one
 * playbook for one incident: it evaluates the policies, waits for people when
 * a policy says so, announces the mitigations, holds them on a durable timer
 * and withdraws them.
 */
import type { AutomationStatus, PlannedAction } from '../core/automation-plan';
import type { PolicyDecision } from '../core/policy';
import type { Approval } from '../core/replay';
import type { ApprovalActivities } from './decision-contract';
import type { Person } from '../core/person';
import type { CredentialKind } from '../core/principal';

export interface AutomationInput {
  orgId: string;
  /** `aut_…`, derived from the workspace, the incident and the playbook version: one incident starts one run of each. */
  automationId: string;
  incidentId: string;
  playbookId: string;
  playbookVersion: number;
  /** The key that wrote the playbook version the run follows: the four-eyes rule's other person. */
  requestedBy: string;
  /** The person who wrote that version (null for a service key); absent from runs started before persons: the worker asks the key's owner. */
  requestedByPerson?: Person | null;
  requestedAt: number;
}

export interface AutomationState {
  status: AutomationStatus;
  approvals: Approval[];
  error: { code: string; message: string } | null;
  actions: PlannedAction[];
  /** When the approval gate closes (workflow time, epoch ms); absent until the run awaits a decision. */
  decision_deadline?: number;
  /** The policies that asked for approval; absent until the run awaits a decision. */
  approval_policies?: string[];
}

export interface PreparedAutomation {
  decision: PolicyDecision;
  deniedMessage: string;
  actions: PlannedAction[];
}

/** An approver's request to end a run's mitigations early, or to hold them longer; proven like a decision. */
export interface ChangeInput {
  approverKeyId: string;
  approverPerson?: Person | null;
  approverVia?: CredentialKind;
  comment?: string;
  decisionToken?: string;
  /** For an extension: minutes added to every active mitigation's end. */
  minutes?: number;
}

/** Every side effect of the automation workflow (its approval step's among them); implemented in workers/governance/activities. */
export interface AutomationActivities extends ApprovalActivities {
  /** Writes the run's state (and publishes its webhook event); the version is the workflow's step, so a late retry never overwrites a newer state. */
  recordAutomationState(args: { input: AutomationInput; state: AutomationState; version: number }): Promise<void>;
  /**
   * Loads the incident and the playbook version, plans its actions, and evaluates the policies as they are now; the
   * actions carry their previews when the policies ask for approval (people decide on them).
   */
  prepareAutomation(input: AutomationInput): Promise<PreparedAutomation>;
  /** The actions with their previews, for a run that announced without waiting: computed off the announcement's path. */
  previewAutomation(args: { input: AutomationInput; actions: PlannedAction[] }): Promise<PlannedAction[]>;
  /**
   * Evaluates the policies again (time passed while people decided) and, when they still allow it, writes the
   * mitigations to the ledger from `startsAt`, or from the attempt's own write when that is later (a retried attempt
   * holds its mitigations for their whole duration), and has the speaker announce them; answers the actions with
   * their starts and ends, or the policy's refusal. Audited.
   */
  executeAutomation(args: { input: AutomationInput; actions: PlannedAction[]; startsAt: number }): Promise<{ actions: PlannedAction[] } | { denied: string }>;
  /** Marks the mitigations withdrawn at `at` in the ledger and has the speaker withdraw them; audited with `reason`. */
  withdrawMitigations(args: { input: AutomationInput; ids: string[]; at: number; reason: 'expired' | 'withdrawn' | 'failed' | 'attack_ended'; by?: string; byPerson?: Person | null; comment?: string }): Promise<void>;
  /** Whether the policies allow holding the active mitigations `minutes` longer; when they do, the ledger holds the new ends. Audited. */
  extendMitigations(args: { input: AutomationInput; actions: PlannedAction[]; minutes: number; by: string; byPerson?: Person | null; comment?: string }): Promise<{ actions: PlannedAction[] } | { denied: string }>;
  /** Checks the proof and the key of a withdraw or extend request, as a decision's (four eyes too for an extension). */
  checkChange(args: { input: AutomationInput; workflowId: string; change: 'withdraw' | 'extend'; request: ChangeInput }): Promise<{ ok: true } | { ok: false; message: string }>;
}
