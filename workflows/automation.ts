/**
 * The automation workflow: one run of one playbook version for one incident.
 * Deterministic decisions only; every side effect (policies, previews on
 * stored flows, the mitigation ledger and the BGP speaker, the audit ledger,
 * notifications) is an activity in workers/governance/activities.
 *
 * evaluating → (denied | awaiting_approval → denied | expired) → active →
 * completed (every mitigation reached its end) | withdrawn (an approver ended
 * them early) | failed. The mitigation ledger holds each mitigation's end, so
 * the reconciler withdraws it on time even if this run is gone; the run's
 * timer makes the withdrawal a recorded, audited step.
 */
import type { Person } from '../core/person';
import { approverFrom } from '../core/principal';
import {
  ActivityFailure, ApplicationFailure, allHandlersFinished, condition, patched, proxyActivities, setHandler, workflowInfo,
} from '@temporalio/workflow';
import { ApprovalGate } from './approval-gate';
import type { AutomationStatus, PlannedAction } from '../core/automation-plan';
import type { PolicyDecision } from '../core/policy';
import type { AutomationActivities, AutomationInput, AutomationState, ChangeInput } from './automation-contract';
import type { DecisionInput } from './decision-contract';

import {
  approveAutomationSignal, attackEndedSignal, automationStatusQuery, changeFailures, decideAutomationUpdate, denyAutomationSignal, extendAutomationUpdate, withdrawAutomationUpdate,
} from './automation-messages';

/** The longest extension asked at once, in minutes (a week); the policies bound the whole duration. */
const maxExtensionMinutes = 10_080;

const { recordAutomationState, prepareAutomation, executeAutomation } = proxyActivities<AutomationActivities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 second', maximumInterval: '10 seconds', maximumAttempts: 20, nonRetryableErrorTypes: ['NOT_FOUND'] },
});
// Off the announcement's path, and only informative: a few tries.
const { previewAutomation } = proxyActivities<AutomationActivities>({ startToCloseTimeout: '30 seconds', retry: { initialInterval: '1 second', maximumAttempts: 3 } });
// The safety path: a withdrawal is tried until it is written (the ledger's end withdraws the route meanwhile).
const { withdrawMitigations } = proxyActivities<AutomationActivities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 second', maximumInterval: '30 seconds' },
});
// Answered within the API's deadline for an update.
const { checkChange, extendMitigations } = proxyActivities<AutomationActivities>({
  startToCloseTimeout: '5 seconds',
  scheduleToCloseTimeout: '10 seconds',
  retry: { initialInterval: '500 milliseconds', maximumInterval: '2 seconds' },
});

const active = (a: PlannedAction) => a.mitigation !== null && a.ends_at !== undefined && a.withdrawn_at === undefined;

/**
 * One run's state and steps. The update handlers and the main path share the
 * state; `changing` serializes withdraw and extend requests so the state they
 * change is never raced.
 */
class AutomationRun {
  readonly state: AutomationState = { status: 'evaluating', approvals: [], error: null, actions: [] };
  private version = 1;
  private withdrawRequest?: { by: string; byPerson: Person | null; comment?: string };
  private attackEnded = false;
  private changing = false;
  private readonly gate: ApprovalGate<AutomationState>;

  constructor(private readonly input: AutomationInput) {
    this.gate = new ApprovalGate(
      {
        kind: 'automation',
        orgId: input.orgId,
        id: input.automationId,
        requestedBy: input.requestedBy,
        ...(input.requestedByPerson === undefined ? {} : { requesterPerson: input.requestedByPerson }),
      },
      this.state,
    );
  }

  installHandlers(): void {
    const gate = this.gate;
    setHandler(automationStatusQuery, () => this.state);
    setHandler(attackEndedSignal, () => void (this.attackEnded = true));
    setHandler(approveAutomationSignal, (raw) => gate.enqueue('approve', raw));
    setHandler(denyAutomationSignal, (raw) => gate.enqueue('deny', raw));
    setHandler(decideAutomationUpdate, (d: DecisionInput) => gate.decideNow(d), { validator: (d: DecisionInput) => gate.validate(d) });
    const validRequest = (request: ChangeInput) => {
      if (typeof request?.approverKeyId !== 'string') throw new Error('a change names its approver key');
    };
    setHandler(
      withdrawAutomationUpdate,
      (request: ChangeInput) =>
        this.change('withdraw', request, async () => {
          this.withdrawRequest = { by: request.approverKeyId, byPerson: approverFrom(request).approverPerson, ...(typeof request.comment === 'string' ? { comment: request.comment.slice(0, 1000) } : {}) };
          await condition(() => this.state.status !== 'active');
        }),
      { validator: validRequest },
    );
    setHandler(extendAutomationUpdate, (request: ChangeInput) => this.change('extend', request, () => this.extend(request)), {
      validator: (request: ChangeInput) => {
        validRequest(request);
        if (!Number.isInteger(request.minutes) || request.minutes! < 1 || request.minutes! > maxExtensionMinutes) {
          throw new Error(`an extension is a whole number of minutes from 1 to ${maxExtensionMinutes}`);
        }
      },
    });
  }

  /** Stored at every step: the API reads runs from the store. */
  async record(): Promise<void> {
    this.version += 1;
    await recordAutomationState({ input: this.input, state: { ...this.state, actions: this.state.actions.map((a) => ({ ...a })) }, version: this.version });
  }

  async moveTo(status: AutomationStatus, error: AutomationState['error'] = null): Promise<void> {
    this.state.status = status;
    this.state.error = error;
    await this.record();
  }

  async finish(status: AutomationStatus, error: AutomationState['error'] = null): Promise<AutomationState> {
    await this.moveTo(status, error);
    // An update still answering (a refused one being audited) finishes before the workflow does.
    await condition(allHandlersFinished);
    return this.state;
  }

  /** Runs `work` alone: a change (withdraw, extend) and the timer's withdrawal of what ended never interleave. */
  private async exclusively<T>(work: () => Promise<T>): Promise<T> {
    await condition(() => !this.changing);
    this.changing = true;
    try {
      return await work();
    } finally {
      this.changing = false;
    }
  }

  private notActive(): ApplicationFailure {
    return ApplicationFailure.create({ type: changeFailures.notActive, message: `the automation is ${this.state.status}, not active`, nonRetryable: true });
  }

  /** A withdraw or extend request, checked like a decision (its proof, its key), then carried out while the run is still active. */
  private change(kind: 'withdraw' | 'extend', request: ChangeInput, work: () => Promise<void>): Promise<AutomationState> {
    return this.exclusively(async () => {
      if (this.state.status !== 'active') throw this.notActive();
      let verdict: { ok: true } | { ok: false; message: string };
      try {
        verdict = await checkChange({ input: this.input, workflowId: workflowInfo().workflowId, change: kind, request });
      } catch (err) {
        if (!(err instanceof ActivityFailure)) throw err;
        throw ApplicationFailure.create({ type: changeFailures.unverifiable, message: `the approver could not be checked: ${err.cause?.message ?? err.message}`, nonRetryable: true });
      }
      if (!verdict.ok) throw ApplicationFailure.create({ type: changeFailures.refused, message: verdict.message, nonRetryable: true });
      // The check took time: the run may have ended meanwhile.
      if (this.state.status !== 'active') throw this.notActive();
      await work();
      return this.state;
    });
  }

  private async extend(request: ChangeInput): Promise<void> {
    const actions = this.state.actions.filter(active);
    if (!actions.length) throw this.notActive();
    const outcome = await extendMitigations({
      input: this.input,
      actions,
      minutes: request.minutes!,
      by: request.approverKeyId,
      byPerson: approverFrom(request).approverPerson,
      ...(typeof request.comment === 'string' ? { comment: request.comment.slice(0, 1000) } : {}),
    });
    if ('denied' in outcome) throw ApplicationFailure.create({ type: changeFailures.denied, message: outcome.denied, nonRetryable: true });
    const extended = new Map(outcome.actions.map((a) => [a.id, a]));
    this.state.actions = this.state.actions.map((a) => extended.get(a.id) ?? a);
    await this.record();
  }

  /** Waits for a decision when the policies ask for one; the run's end when it is denied or expires. */
  async approval(decision: Extract<PolicyDecision, { decision: 'approval_required' }>): Promise<AutomationState | undefined> {
    this.state.decision_deadline = Date.now() + Math.round(decision.timeout_minutes * 60_000);
    this.state.approval_policies = decision.policies;
    await this.moveTo('awaiting_approval');
    const taken = await this.gate.decision(this.state.decision_deadline - Date.now());
    if (!taken) return this.finish('expired', { code: 'APPROVAL_EXPIRED', message: `no approver decided within ${decision.timeout_minutes} minutes` });
    await this.gate.audit(taken);
    if (taken.decision === 'deny') return this.finish('denied', { code: 'POLICY_DENIED', message: `Execution blocked by policy: denied by approver ${taken.approverKeyId}` });
    return undefined;
  }

  /** Puts the mitigations in place; a failure withdraws whatever the ledger took (nothing is left half-announced) and fails the run. */
  async execute(): Promise<AutomationState | undefined> {
    let executed: Awaited<ReturnType<typeof executeAutomation>>;
    try {
      executed = await executeAutomation({ input: this.input, actions: this.state.actions, startsAt: Date.now() });
    } catch (err) {
      const ids = this.state.actions.filter((a) => a.mitigation !== null).map((a) => a.id);
      await withdrawMitigations({ input: this.input, ids, at: Date.now(), reason: 'failed' });
      const cause = (err as Error).cause instanceof Error ? ((err as Error).cause as Error).message : (err as Error).message;
      const message = `the mitigations could not be put in place: ${cause}`;
      await this.moveTo('failed', { code: 'AUTOMATION_FAILED', message });
      throw ApplicationFailure.nonRetryable(message, 'AUTOMATION_FAILED', { status: 'failed' });
    }
    if ('denied' in executed) return this.finish('denied', { code: 'POLICY_DENIED', message: executed.denied });
    this.state.actions = executed.actions;
    await this.moveTo('active');
    if (this.state.actions.some((a) => a.mitigation !== null && a.preview === null)) await this.addPreviews();
    return undefined;
  }

  /** A run no one had to approve shows its preview too, computed once its mitigations are announced; a failure costs only the preview. */
  private async addPreviews(): Promise<void> {
    try {
      const previewed = await previewAutomation({ input: this.input, actions: this.state.actions });
      const byId = new Map(previewed.map((a) => [a.id, a.preview]));
      // A withdraw request holds the lock until the timer (hold) has carried it out, and the timer starts
      // after this: waiting for the lock here deadlocked both (the request answered 503 after its deadline).
      // The preview of a run being withdrawn is dropped instead.
      if (patched('preview-yields-to-withdraw')) {
        await condition(() => !this.changing || this.withdrawRequest !== undefined);
        if (this.withdrawRequest) return;
      }
      await this.exclusively(async () => {
        this.state.actions = this.state.actions.map((a) => ({ ...a, preview: byId.get(a.id) ?? a.preview }));
        await this.record();
      });
    } catch (err) {
      if (!(err instanceof ActivityFailure)) throw err;
    }
  }

  /** The durable timer: sleeps until the next end, wakes early for a withdraw request or an extension. */
  async hold(): Promise<AutomationState> {
    // Runs started before actions could be held until their attack ends never withdraw on the signal.
    const holdsAttacks = patched('hold-until-attack-ends');
    const attackOver = () => holdsAttacks && this.attackEnded && this.state.actions.some((a) => active(a) && a.until_attack_ends);
    while (this.state.actions.some(active)) {
      const nextEnd = Math.min(...this.state.actions.filter(active).map((a) => a.ends_at!));
      const ends = this.state.actions.map((a) => a.ends_at);
      const woken = await condition(
        () => this.withdrawRequest !== undefined || attackOver() || this.state.actions.some((a, i) => a.ends_at !== ends[i]),
        Math.max(1, nextEnd - Date.now()),
      );
      if (this.withdrawRequest) return this.withdrawAll(this.withdrawRequest);
      if (attackOver()) await this.exclusively(() => this.withdrawHeld());
      else if (!woken) await this.exclusively(() => this.withdrawEnded());
    }
    return this.finish('completed');
  }

  /** The actions held until the attack ends, withdrawn now that their incident resolved. */
  private async withdrawHeld(): Promise<void> {
    const at = Date.now();
    const held = this.state.actions.filter((a) => active(a) && a.until_attack_ends).map((a) => a.id);
    if (!held.length) return;
    await withdrawMitigations({ input: this.input, ids: held, at, reason: 'attack_ended' });
    this.state.actions = this.state.actions.map((a) => (held.includes(a.id) ? { ...a, withdrawn_at: at } : a));
    await this.record();
  }

  private async withdrawAll(request: { by: string; byPerson: Person | null; comment?: string }): Promise<AutomationState> {
    const at = Date.now();
    const ids = this.state.actions.filter(active).map((a) => a.id);
    await withdrawMitigations({ input: this.input, ids, at, reason: 'withdrawn', ...request });
    this.state.actions = this.state.actions.map((a) => (ids.includes(a.id) ? { ...a, withdrawn_at: at } : a));
    return this.finish('withdrawn');
  }

  private async withdrawEnded(): Promise<void> {
    const at = Date.now();
    const ended = this.state.actions.filter((a) => active(a) && a.ends_at! <= at).map((a) => a.id);
    if (!ended.length) return;
    await withdrawMitigations({ input: this.input, ids: ended, at, reason: 'expired' });
    this.state.actions = this.state.actions.map((a) => (ended.includes(a.id) ? { ...a, withdrawn_at: a.ends_at } : a));
    await this.record();
  }
}

export async function automationWorkflow(input: AutomationInput): Promise<AutomationState> {
  const run = new AutomationRun(input);
  run.installHandlers();
  // The first record and the preparation run side by side: the record stores `evaluating` for the API, and the
  // preparation reads the incident, the playbook and the policies; neither waits on the other's ClickHouse call.
  const recorded = run.record();
  let prepared: Awaited<ReturnType<typeof prepareAutomation>>;
  try {
    [prepared] = await Promise.all([prepareAutomation(input), recorded]);
  } catch (err) {
    await recorded.catch(() => undefined);
    // Nothing was written to the ledger yet: the run ends failed, stored as such.
    const message = `the run could not be prepared: ${err instanceof ActivityFailure ? (err.cause?.message ?? err.message) : (err as Error).message}`;
    await run.moveTo('failed', { code: 'AUTOMATION_FAILED', message });
    throw ApplicationFailure.nonRetryable(message, 'AUTOMATION_FAILED', { status: 'failed' });
  }
  run.state.actions = prepared.actions;
  if (prepared.decision.decision === 'deny') return run.finish('denied', { code: 'POLICY_DENIED', message: prepared.deniedMessage });
  if (prepared.decision.decision === 'approval_required') {
    const ended = await run.approval(prepared.decision);
    if (ended) return ended;
  }
  return (await run.execute()) ?? run.hold();
}
