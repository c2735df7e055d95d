/**
 * The replay workflow: deterministic decisions only. Every side effect
 * (reading ClickHouse, evaluating policies on stored data, checking an
 * approver's key, writing state, the report and the audit ledger) is an
 * activity in workers/governance/activities.
 */
import {
  ApplicationFailure, allHandlersFinished, condition, defineQuery, defineSignal, defineUpdate, proxyActivities, setHandler,
} from '@temporalio/workflow';
import type { ReplayStatus } from '../core/replay';
import { ApprovalGate } from './approval-gate';
import type { ApprovalInput, DecisionInput } from './decision-contract';
import type { ReplayActivities, ReplayInput, ReplayState } from './replay-contract';

/** Why a `decide` update failed (the API answers 403, 503 and 409): defined with the approval step. */
export { decisionFailures } from './approval-gate';

/**
 * Signals for whoever drives Temporal directly: checked like the API's decisions, so one is taken only with a
 * decision token the API signed for it (a key id alone proves nothing); a late one is ignored.
 */
export const approveSignal = defineSignal<[ApprovalInput]>('approve');
export const denySignal = defineSignal<[ApprovalInput]>('deny');
/** What the API sends: the validator refuses a decision once one was taken, so a second approver learns it. */
export const decideUpdate = defineUpdate<ReplayState, [DecisionInput]>('decide');
export const replayStatusQuery = defineQuery<ReplayState>('replayStatus');

// Short activities, short timeout: one lost with a crashed worker is retried within seconds.
const { recordReplayState, prepareReplay } = proxyActivities<ReplayActivities>({
  startToCloseTimeout: '15 seconds',
  retry: { initialInterval: '1 second', maximumInterval: '30 seconds', maximumAttempts: 10 },
});
const { runReplay } = proxyActivities<ReplayActivities>({
  startToCloseTimeout: '10 minutes',
  retry: { initialInterval: '2 seconds', maximumAttempts: 5, nonRetryableErrorTypes: ['NOT_FOUND'] },
});

/**
 * Denied and expired are business outcomes: the workflow completes and
 * returns its final state. Only a replay that fails fails the workflow.
 */
export async function replayWorkflow(input: ReplayInput): Promise<ReplayState> {
  const state: ReplayState = { status: 'queued', approvals: [], error: null, report: null, window_minutes: input.windowMinutes ?? input.plannedWindowMinutes ?? 0 };
  let version = 1;
  const gate = new ApprovalGate(
    { kind: 'replay', orgId: input.orgId, id: input.replayId, requestedBy: input.requestedBy, ...(input.requestedByPerson === undefined ? {} : { requesterPerson: input.requestedByPerson }) },
    state,
  );
  setHandler(replayStatusQuery, () => state);
  setHandler(approveSignal, (raw) => gate.enqueue('approve', raw));
  setHandler(denySignal, (raw) => gate.enqueue('deny', raw));
  setHandler(decideUpdate, (d: DecisionInput) => gate.decideNow(d), { validator: (d: DecisionInput) => gate.validate(d) });

  // Stored first, then shown by the query: whoever sees a status live finds it stored too (GET /v1/approvals reads the store).
  const moveTo = async (status: ReplayStatus, error: ReplayState['error'] = null) => {
    version += 1;
    await recordReplayState({ input, state: { ...state, status, error }, version });
    state.status = status;
    state.error = error;
  };
  const finish = async (status: 'completed' | 'denied' | 'expired', error: ReplayState['error'] = null) => {
    await moveTo(status, error);
    // An update still answering (a refused one being audited) finishes before the workflow does.
    await condition(allHandlersFinished);
    return state;
  };

  await moveTo('running');
  const prepared = await prepareReplay(input);
  state.window_minutes = prepared.window.window_minutes;
  if (prepared.decision.decision === 'deny') return finish('denied', { code: 'POLICY_DENIED', message: prepared.deniedMessage });
  if (prepared.decision.decision === 'approval_required') {
    const timeoutMinutes = prepared.decision.timeout_minutes;
    // Set before the state is recorded, so the stored replay tells approvers exactly when the gate closes.
    state.decision_deadline = Date.now() + Math.round(timeoutMinutes * 60_000);
    state.approval_policies = prepared.decision.policies;
    await moveTo('awaiting_approval');
    const decision = await gate.decision(state.decision_deadline - Date.now());
    if (!decision) return finish('expired', { code: 'APPROVAL_EXPIRED', message: `no approver decided within ${timeoutMinutes} minutes` });
    await gate.audit(decision);
    if (decision.decision === 'deny') {
      return finish('denied', { code: 'POLICY_DENIED', message: `Execution blocked by policy: denied by approver ${decision.approverKeyId}` });
    }
    await moveTo('running');
  }
  try {
    state.report = await runReplay({ input, window: prepared.window });
  } catch (err) {
    const message = `replay failed: ${(err as Error).message}`;
    await moveTo('failed', { code: 'REPLAY_FAILED', message });
    throw ApplicationFailure.nonRetryable(message, 'REPLAY_FAILED', { status: 'failed' });
  }
  return finish('completed');
}
