/**
 * The replay workflow: deterministic decisions only. Every side effect
 * (reading ClickHouse, evaluating policies on stored data, writing state and
 * the report) is an activity in workers/activities.
 */
import {
  ApplicationFailure,
  condition,
  defineQuery,
  defineSignal,
  defineUpdate,
  proxyActivities,
  setHandler,
} from '@temporalio/workflow';
import type { ReplayStatus } from '../core/replay';
import type { ApprovalInput, DecisionInput, ReplayActivities, ReplayInput, ReplayState } from './replay-contract';

/** Signals for operators driving Temporal directly (`temporal workflow signal`): a late one is ignored. */
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

export async function replayWorkflow(input: ReplayInput): Promise<ReplayState> {
  const state: ReplayState = { status: 'queued', approvals: [], error: null, report: null, window_minutes: input.windowMinutes ?? 0 };
  let version = 1;
  let decision: 'approve' | 'deny' | undefined;
  const decide = (kind: 'approve' | 'deny') => (a: ApprovalInput) => {
    if (state.status !== 'awaiting_approval' || decision) return;
    decision = kind;
    state.approvals.push({ decision: kind, approver_key_id: a.approverKeyId, at: Date.now(), ...(a.comment ? { comment: a.comment } : {}) });
  };
  setHandler(replayStatusQuery, () => state);
  setHandler(approveSignal, decide('approve'));
  setHandler(denySignal, decide('deny'));
  setHandler(
    decideUpdate,
    (input) => {
      decide(input.decision)(input);
      return state;
    },
    {
      validator: (_input: DecisionInput) => {
        if (state.status !== 'awaiting_approval' || decision) throw new Error(`the replay is ${state.status}, not awaiting a decision`);
      },
    },
  );

  const moveTo = async (status: ReplayStatus, error: ReplayState['error'] = null) => {
    state.status = status;
    state.error = error;
    version += 1;
    await recordReplayState({ input, state, version });
  };
  const end = async (status: 'denied' | 'expired' | 'failed', code: string, message: string): Promise<never> => {
    await moveTo(status, { code, message });
    throw ApplicationFailure.nonRetryable(message, code, { status });
  };

  await moveTo('running');
  const prepared = await prepareReplay(input);
  state.window_minutes = prepared.window.window_minutes;
  if (prepared.decision.decision === 'deny') return end('denied', 'POLICY_DENIED', prepared.deniedMessage);
  if (prepared.decision.decision === 'approval_required') {
    await moveTo('awaiting_approval');
    const decided = await condition(() => decision !== undefined, Math.round(prepared.decision.timeout_minutes * 60_000));
    if (!decided) return end('expired', 'APPROVAL_EXPIRED', `no approver decided within ${prepared.decision.timeout_minutes} minutes`);
    if (decision === 'deny') {
      const by = state.approvals[state.approvals.length - 1]?.approver_key_id ?? 'an approver';
      return end('denied', 'POLICY_DENIED', `Execution blocked by policy: denied by approver ${by}`);
    }
    await moveTo('running');
  }
  try {
    state.report = await runReplay({ input, window: prepared.window });
  } catch (err) {
    return end('failed', 'REPLAY_FAILED', `replay failed: ${(err as Error).message}`);
  }
  await moveTo('completed');
  return state;
}
