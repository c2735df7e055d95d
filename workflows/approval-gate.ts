/**
 * The approval step of every workflow that waits for people (replays,
 * automation runs), in a file of its own: workflow code (deterministic),
 * whose checks and audit are activities. Each workflow installs its signal
 * and update handlers on it.
 */
import { ActivityFailure, ApplicationFailure, condition, proxyActivities, workflowInfo } from '@temporalio/workflow';
import type {
  ApprovalActivities, ApprovalInput, ApproverVerdict, DecisionDoor, DecisionInput, DecisionRecord, DecisionSubject, GatedState,
} from './decision-contract';
import { approverFrom } from '../core/principal';

/** Why a `decide` update failed, as the ApplicationFailure's type: the API answers 403, 503 and 409. */
export const decisionFailures = { refused: 'APPROVER_REFUSED', unverifiable: 'APPROVER_UNVERIFIABLE', closed: 'NOT_AWAITING_DECISION' } as const;

// A key check answers within the API's 15 s deadline for an update; one that cannot answer refuses the decision.
const { checkApprover } = proxyActivities<ApprovalActivities>({
  startToCloseTimeout: '5 seconds',
  scheduleToCloseTimeout: '10 seconds',
  retry: { initialInterval: '500 milliseconds', maximumInterval: '2 seconds' },
});
// A decision's entry is retried until the ledger takes it: nothing runs on an unaudited decision.
const { auditDecision } = proxyActivities<ApprovalActivities>({
  startToCloseTimeout: '15 seconds',
  retry: { initialInterval: '1 second', maximumInterval: '30 seconds' },
});

type Decision = Omit<DecisionRecord, 'refusal'>;
/** A decision as it arrived, with the token that proves it: the token goes to the check only, never to the state or the ledger. */
interface Arrival {
  decision: Decision;
  token?: string;
}

/**
 * The approval step. A decision comes through either door: a signal only
 * queues it, and the main loop checks each queued one with an activity and
 * takes the first valid one; the `decide` update checks its own and answers
 * with the outcome. The decision taken is audited once, by the main loop;
 * each refused one is audited as refused and changes nothing else.
 */
export class ApprovalGate<S extends GatedState> {
  private readonly queued: Arrival[] = [];
  private received = 0;
  private taken?: Decision;
  private audited = false;
  /** Set when the timeout passed with no decision taken: nothing is taken after it. */
  private closed = false;

  constructor(
    private readonly subject: DecisionSubject,
    private readonly state: S,
  ) {}

  private get open(): boolean {
    return this.state.status === 'awaiting_approval' && !this.taken && !this.closed;
  }

  /** A signal handler only queues, so it needs no I/O; a late signal is ignored. */
  enqueue(decision: Decision['decision'], raw: unknown): void {
    if (this.open) this.queued.push(this.arrived(decision, raw, 'signal'));
  }

  /** A decision as it arrived; a raw signal may carry anything, so its fields are read defensively. */
  private arrived(decision: Decision['decision'], raw: unknown, door: DecisionDoor): Arrival {
    const a = (typeof raw === 'object' && raw !== null ? raw : {}) as Partial<ApprovalInput>;
    this.received += 1;
    return {
      decision: {
        decision,
        door,
        attempt: this.received,
        at: Date.now(),
        ...approverFrom(a),
        ...(typeof a.comment === 'string' && a.comment ? { comment: a.comment.slice(0, 1000) } : {}),
      },
      // No token the API signs is that long; a longer one is as good as none.
      ...(typeof a.decisionToken === 'string' && a.decisionToken.length <= 200 ? { token: a.decisionToken } : {}),
    };
  }

  validate(d: DecisionInput): void {
    if (!this.open) throw new Error(`the ${this.subject.kind} is ${this.state.status}, not awaiting a decision`);
    if (d?.decision !== 'approve' && d?.decision !== 'deny') throw new Error('the decision must be approve or deny');
  }

  /** The update's door: answers once the decision is checked, and, when taken, audited. */
  async decideNow(input: DecisionInput): Promise<S> {
    const arrival = this.arrived(input.decision, input, 'update');
    const { decision } = arrival;
    const verdict = await this.check(arrival);
    if (!verdict.ok) {
      await this.refuse(decision, verdict);
      const type = verdict.reason === 'unverifiable' ? decisionFailures.unverifiable : decisionFailures.refused;
      throw ApplicationFailure.create({ type, message: verdict.message, nonRetryable: true });
    }
    if (!this.open) {
      throw ApplicationFailure.create({ type: decisionFailures.closed, message: `the ${this.subject.kind} is ${this.state.status}, not awaiting a decision`, nonRetryable: true });
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
  private async consider(arrival: Arrival): Promise<void> {
    const { decision } = arrival;
    const verdict = await this.check(arrival);
    // Refused, it is audited as refused, even when an update took a decision meanwhile.
    if (!verdict.ok) return this.refuse(decision, verdict);
    // Valid, but an update took a decision while this one was checked: this one came too late.
    if (this.open) this.take(decision);
  }

  private async check({ decision, token }: Arrival): Promise<ApproverVerdict> {
    try {
      return await checkApprover({
        subject: this.subject,
        // The token is checked against the workflow it reached, not against what the sender says.
        workflowId: workflowInfo().workflowId,
        approver: { approverKeyId: decision.approverKeyId, approverPerson: decision.approverPerson, approverVia: decision.approverVia },
        decision: decision.decision,
        ...(token ? { decisionToken: token } : {}),
      });
    } catch (err) {
      // A key that cannot be checked cannot decide: the decision is refused and may be sent again.
      if (!(err instanceof ActivityFailure)) throw err;
      return { ok: false, reason: 'unverifiable', message: `the approver could not be checked: ${err.cause?.message ?? err.message}` };
    }
  }

  private async refuse(decision: Decision, verdict: Extract<ApproverVerdict, { ok: false }>): Promise<void> {
    await auditDecision({ subject: this.subject, record: { ...decision, refusal: { reason: verdict.reason, message: verdict.message } } });
  }

  private take(decision: Decision): void {
    this.taken = decision;
    this.state.approvals.push({
      decision: decision.decision,
      approver_key_id: decision.approverKeyId,
      person: decision.approverPerson,
      at: decision.at,
      ...(decision.comment ? { comment: decision.comment } : {}),
    });
  }

  /** Audits the decision taken, whichever door it came through; then the update that brought it answers. */
  async audit(decision: Decision): Promise<void> {
    await auditDecision({ subject: this.subject, record: decision });
    this.audited = true;
  }
}
