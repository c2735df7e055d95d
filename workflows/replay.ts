/**
 * The replay workflow: deterministic decisions only. Every side effect
 * (reading ClickHouse, evaluating policies on stored data, checking an
 * approver's key, writing state, the report and the audit ledger) is an
 * activity in workers/activities.
 */
import {
  ActivityFailure, ApplicationFailure, allHandlersFinished, condition, defineQuery, defineSignal, defineUpdate, patched, proxyActivities, setHandler,
} from '@temporalio/workflow';
import type { ReplayStatus } from '../core/replay';
import type {
  ApprovalInput, ApproverVerdict, DecisionDoor, DecisionInput, DecisionRecord, ReplayActivities, ReplayInput, ReplayState,
} from './replay-contract';

/** Signals for operators driving Temporal directly (`temporal workflow signal`): checked like the API's decisions; a late one is ignored. */
export const approveSignal = defineSignal<[ApprovalInput]>('approve');
export const denySignal = defineSignal<[ApprovalInput]>('deny');
/** What the API sends: the validator refuses a decision once one was taken, so a second approver learns it. */
export const decideUpdate = defineUpdate<ReplayState, [DecisionInput]>('decide');
export const replayStatusQuery = defineQuery<ReplayState>('replayStatus');

/** Why a `decide` update failed, as the ApplicationFailure's type: the API answers 403, 503 and 409. */
export const decisionFailures = { refused: 'APPROVER_REFUSED', unverifiable: 'APPROVER_UNVERIFIABLE', closed: 'NOT_AWAITING_DECISION' } as const;

// Short activities, short timeout: one lost with a crashed worker is retried within seconds.
const { recordReplayState, prepareReplay } = proxyActivities<ReplayActivities>({
  startToCloseTimeout: '15 seconds',
  retry: { initialInterval: '1 second', maximumInterval: '30 seconds', maximumAttempts: 10 },
});
const { runReplay } = proxyActivities<ReplayActivities>({
  startToCloseTimeout: '10 minutes',
  retry: { initialInterval: '2 seconds', maximumAttempts: 5, nonRetryableErrorTypes: ['NOT_FOUND'] },
});
// A key check answers within the API's 15 s deadline for an update; one that cannot answer refuses the decision.
const { checkApprover } = proxyActivities<ReplayActivities>({
  startToCloseTimeout: '5 seconds',
  scheduleToCloseTimeout: '10 seconds',
  retry: { initialInterval: '500 milliseconds', maximumInterval: '2 seconds' },
});
// A decision's entry is retried until the ledger takes it: no replay runs on an unaudited decision.
const { auditDecision } = proxyActivities<ReplayActivities>({
  startToCloseTimeout: '15 seconds',
  retry: { initialInterval: '1 second', maximumInterval: '30 seconds' },
});

type Decision = Omit<DecisionRecord, 'refusal'>;

/**
 * The approval step. A decision comes through either door: a signal only
 * queues it, and the main loop checks each queued one with an activity and
 * takes the first valid one; the `decide` update checks its own and answers
 * with the outcome. The decision taken is audited once, by the main loop;
 * each refused one is audited as refused and changes nothing else.
 */
class ApprovalGate {
  private readonly queued: Decision[] = [];
  private received = 0;
  private taken?: Decision;
  private audited = false;
  /** Set when the timeout passed with no decision taken: nothing is taken after it. */
  private closed = false;

  constructor(
    private readonly input: ReplayInput,
    private readonly state: ReplayState,
  ) {}

  install(): void {
    setHandler(approveSignal, (raw) => this.enqueue('approve', raw));
    setHandler(denySignal, (raw) => this.enqueue('deny', raw));
    setHandler(decideUpdate, (d: DecisionInput) => this.decideNow(d), { validator: (d: DecisionInput) => this.validate(d) });
  }

  private get open(): boolean {
    return this.state.status === 'awaiting_approval' && !this.taken && !this.closed;
  }

  /** A signal handler only queues, so it needs no I/O; a late signal is ignored. */
  private enqueue(decision: Decision['decision'], raw: unknown): void {
    if (this.open) this.queued.push(this.arrived(decision, raw, 'signal'));
  }

  /** A decision as it arrived; a raw signal may carry anything, so its fields are read defensively. */
  private arrived(decision: Decision['decision'], raw: unknown, door: DecisionDoor): Decision {
    const a = (typeof raw === 'object' && raw !== null ? raw : {}) as Partial<ApprovalInput>;
    this.received += 1;
    return {
      decision,
      door,
      attempt: this.received,
      at: Date.now(),
      // Bounded as the API bounds them: no key id is that long, and a comment is at most 1,000 characters.
      approverKeyId: typeof a.approverKeyId === 'string' && a.approverKeyId.length <= 100 ? a.approverKeyId : '',
      ...(typeof a.comment === 'string' && a.comment ? { comment: a.comment.slice(0, 1000) } : {}),
    };
  }

  private validate(d: DecisionInput): void {
    if (!this.open) throw new Error(`the replay is ${this.state.status}, not awaiting a decision`);
    if (d?.decision !== 'approve' && d?.decision !== 'deny') throw new Error('the decision must be approve or deny');
  }

  /** The update's door: answers once the decision is checked, and, when taken, audited. */
  private async decideNow(input: DecisionInput): Promise<ReplayState> {
    const decision = this.arrived(input.decision, input, 'update');
    const verdict = await this.check(decision);
    if (!verdict.ok) {
      await this.refuse(decision, verdict);
      const type = verdict.reason === 'unverifiable' ? decisionFailures.unverifiable : decisionFailures.refused;
      throw ApplicationFailure.create({ type, message: verdict.message, nonRetryable: true });
    }
    if (!this.open) {
      throw ApplicationFailure.create({ type: decisionFailures.closed, message: `the replay is ${this.state.status}, not awaiting a decision`, nonRetryable: true });
    }
    this.take(decision);
    await condition(() => this.audited);
    return this.state;
  }

  /** The first valid decision within `timeoutMs`, or undefined when none came in time. */
  async decision(timeoutMs: number): Promise<Decision | undefined> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      if (this.taken) return this.taken;
      const next = this.queued.shift();
      if (next) {
        await this.consider(next);
        continue;
      }
      const wait = deadline - Date.now();
      if (wait <= 0 || !(await condition(() => this.taken !== undefined || this.queued.length > 0, wait))) {
        this.closed = this.taken === undefined;
        return this.taken;
      }
    }
  }

  /** Checks a queued signal's decision: takes it when valid, audits it as refused otherwise. */
  private async consider(decision: Decision): Promise<void> {
    const verdict = await this.check(decision);
    // Refused, it is audited as refused, even when an update took a decision meanwhile.
    if (!verdict.ok) return this.refuse(decision, verdict);
    // Valid, but an update took a decision while this one was checked: this one came too late.
    if (this.open) this.take(decision);
  }

  private async check(decision: Decision): Promise<ApproverVerdict> {
    try {
      return await checkApprover({ input: this.input, approverKeyId: decision.approverKeyId });
    } catch (err) {
      // A key that cannot be checked cannot decide: the decision is refused and may be sent again.
      if (!(err instanceof ActivityFailure)) throw err;
      return { ok: false, reason: 'unverifiable', message: `the approver could not be checked: ${err.cause?.message ?? err.message}` };
    }
  }

  private async refuse(decision: Decision, verdict: Extract<ApproverVerdict, { ok: false }>): Promise<void> {
    await auditDecision({ input: this.input, record: { ...decision, refusal: { reason: verdict.reason, message: verdict.message } } });
  }

  private take(decision: Decision): void {
    this.taken = decision;
    this.state.approvals.push({
      decision: decision.decision,
      approver_key_id: decision.approverKeyId,
      at: decision.at,
      ...(decision.comment ? { comment: decision.comment } : {}),
    });
  }

  /** Audits the decision taken, whichever door it came through; then the update that brought it answers. */
  async audit(decision: Decision): Promise<void> {
    await auditDecision({ input: this.input, record: decision });
    this.audited = true;
  }
}

/** The marker of runs started on this code; a run started before it (release 7158c7a) has none and takes `legacyReplayWorkflow`. */
const approvalGatePatch = 'replay-approval-gate';

/**
 * Denied and expired are business outcomes: the workflow completes and
 * returns its final state. Only a replay that fails fails the workflow.
 */
export async function replayWorkflow(input: ReplayInput): Promise<ReplayState> {
  if (!patched(approvalGatePatch)) return legacyReplayWorkflow(input);
  const state: ReplayState = { status: 'queued', approvals: [], error: null, report: null, window_minutes: input.windowMinutes ?? 0 };
  let version = 1;
  const gate = new ApprovalGate(input, state);
  setHandler(replayStatusQuery, () => state);
  gate.install();

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

/*
 * LEGACY, patch `replay-approval-gate`: the workflow as release 7158c7a ran it, kept so its runs replay and
 * finish unchanged: decisions recorded as they arrive (unchecked, unaudited), state changed before it is
 * recorded, denied and expired fail the workflow. Remove once no run started before the patch can be running
 * (longest approval timeout plus a replay after the deploy): ship `deprecatePatch(approvalGatePatch)` in place
 * of the `patched` call, then drop it, this section and test/fixtures/histories/v1.
 */
async function legacyReplayWorkflow(input: ReplayInput): Promise<ReplayState> {
  const state: ReplayState = { status: 'queued', approvals: [], error: null, report: null, window_minutes: input.windowMinutes ?? 0 };
  let version = 1;
  const decided = installLegacyHandlers(state);
  const moveTo = async (status: ReplayStatus, error: ReplayState['error'] = null) => {
    Object.assign(state, { status, error });
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
    const minutes = prepared.decision.timeout_minutes;
    if (!(await condition(() => decided() !== undefined, Math.round(minutes * 60_000)))) {
      return end('expired', 'APPROVAL_EXPIRED', `no approver decided within ${minutes} minutes`);
    }
    if (decided() === 'deny') {
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

/** LEGACY (see above): the first decision is recorded as it arrives, through either door; returns what was decided. */
function installLegacyHandlers(state: ReplayState): () => DecisionInput['decision'] | undefined {
  let decision: DecisionInput['decision'] | undefined;
  const decide = (kind: DecisionInput['decision'], a: ApprovalInput) => {
    if (state.status !== 'awaiting_approval' || decision) return;
    decision = kind;
    state.approvals.push({ decision: kind, approver_key_id: a.approverKeyId, at: Date.now(), ...(a.comment ? { comment: a.comment } : {}) });
  };
  setHandler(replayStatusQuery, () => state);
  setHandler(approveSignal, (a) => decide('approve', a));
  setHandler(denySignal, (a) => decide('deny', a));
  const validator: (d: DecisionInput) => void = () => {
    if (state.status !== 'awaiting_approval' || decision) throw new Error(`the replay is ${state.status}, not awaiting a decision`);
  };
  setHandler(decideUpdate, (d: DecisionInput) => {
    decide(d.decision, d);
    return state;
  }, { validator });
  return () => decision;
}
