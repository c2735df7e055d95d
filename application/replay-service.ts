import { samePerson } from '../core/person';
import { ApplicationFailure, WorkflowExecutionAlreadyStartedError, WorkflowNotFoundError, WorkflowUpdateFailedError, type Client } from '@temporalio/client';
import { historyOf, windowMsOf } from '../core/detection-rules';
import type { DecisionTokens } from '../core/decision-token';
import { AppError, conflict, forbidden, notFound, policyDenied, unavailable, validationError } from '../core/errors';
import { randomId } from '../core/ids';
import { deniedMessage, evaluatePolicies } from '../core/policy';
import { replayWindow, windowOverCap } from '../core/replay';
import type { AuditLedger } from './audit-ledger';
import type { IncidentsRepo } from '../storage/incidents-repo';
import type { PoliciesRepo } from '../storage/policies-repo';
import { terminalStatuses } from '../core/replay';
import type { ReplayRecord, ReplaysRepo } from '../storage/replays-repo';
import { decideUpdate, decisionFailures, replayStatusQuery, replayWorkflow } from '../workflows/replay';
import type { ReplayInput } from '../workflows/replay-contract';
import type { DetectionRulesSource } from './detection-rules-service';
import { approverOfPrincipal, type Principal } from '../core/principal';

const decisionDeadlineMs = 15_000;
/** How long a read waits for the workflow's live status before answering with the stored one. */
const liveStatusDeadlineMs = 5_000;

/** Workflow ids are business keys: the org and the replay id. */
export const replayWorkflowId = (orgId: string, replayId: string) => `replay:${orgId}:${replayId}`;

/**
 * Starts a replay's workflow. Its id is the replay's business key and a
 * second start of that id is refused (WorkflowExecutionAlreadyStartedError),
 * even once the first run closed: a replay runs once.
 */
export async function startReplayWorkflow(client: Client, taskQueue: string, input: ReplayInput): Promise<void> {
  await client.workflow.start(replayWorkflow, {
    taskQueue,
    workflowId: replayWorkflowId(input.orgId, input.replayId),
    workflowIdReusePolicy: 'REJECT_DUPLICATE',
    args: [input],
  });
}

/**
 * The workflow input of a stored replay whose workflow never started: the
 * window it was stored with (computed when it was requested) is the one it
 * runs on.
 */
export function storedReplayInput(record: ReplayRecord): ReplayInput {
  return {
    orgId: record.org_id,
    replayId: record.replay_id,
    incidentId: record.incident_id,
    requestedBy: record.requested_by,
    requestedByPerson: record.requested_by_person,
    requestedAt: record.requested_at,
    windowMinutes: record.window_minutes,
  };
}

/**
 * Requests, reads and decides replays. A request a policy forbids is refused
 * here (403 POLICY_DENIED) and starts nothing; otherwise one Temporal
 * workflow runs the replay and records each state it reaches.
 */
export class ReplayService {
  constructor(
    private readonly deps: {
      client: () => Client;
      taskQueue: string;
      incidents: IncidentsRepo;
      policies: PoliciesRepo;
      replays: ReplaysRepo;
      /** Requests and blocked requests; the workflow audits decisions. */
      audit: AuditLedger;
      /** The window follows the incident's own rules version; the defaults when absent. */
      rules?: DetectionRulesSource;
      /** The longest window a replay may run on (REPLAY_MAX_WINDOW_MINUTES): longer is 400, before any policy is asked. */
      maxWindowMinutes: number;
      /** Signs the proof a decision carries that this API authenticated its approver (DECISION_SIGNING_KEY). */
      decisionTokens: Pick<DecisionTokens, 'mint'>;
    },
  ) {}

  async request(orgId: string, by: Principal, incidentId: string, windowMinutes?: number): Promise<ReplayRecord> {
    const incident = await this.deps.incidents.get(orgId, incidentId);
    if (!incident) throw notFound('incident');
    const history = this.deps.rules ? await this.deps.rules.history(orgId, incident.rules_version) : historyOf([]);
    const window = replayWindow(incident, windowMsOf(history, incident.rules_version), windowMinutes);
    const overCap = windowOverCap(window, windowMinutes, this.deps.maxWindowMinutes);
    if (overCap) throw validationError(overCap, [{ path: 'window_minutes', message: `at most ${this.deps.maxWindowMinutes}` }]);
    const decision = evaluatePolicies(await this.deps.policies.active(orgId), {
      environment: incident.environment,
      severity: incident.severity,
      window_minutes: window.window_minutes,
    });
    if (decision.decision === 'deny') {
      const message = deniedMessage(decision);
      await this.deps.audit.append({ orgId, actor: by.keyId, action: 'replay.blocked', target: incidentId, details: { policy_id: decision.policy_id, message } });
      throw policyDenied(message);
    }
    const now = Date.now();
    const record: ReplayRecord = {
      org_id: orgId,
      replay_id: randomId('rep'),
      incident_id: incidentId,
      status: 'queued',
      requested_by: by.keyId,
      requested_by_person: by.person,
      requested_at: now,
      updated_at: now,
      window_minutes: window.window_minutes,
      approvals: [],
      report: null,
      error: null,
      decision_deadline: null,
      approval_policies: [],
      version: 1,
    };
    await this.deps.replays.put(record);
    // Audited before the workflow starts, so a running replay always has its request in the ledger; a process
    // that dies before the start leaves a queued replay the reconciler starts if this entry exists, else fails.
    await this.deps.audit
      .append({ orgId, actor: by.keyId, action: 'replay.request', target: record.replay_id, details: { incident_id: incidentId } })
      .catch((err: unknown) => this.failToStart(record, err, 'the audit ledger was unavailable'));
    const input: ReplayInput = {
      orgId, replayId: record.replay_id, incidentId, requestedBy: by.keyId, requestedByPerson: by.person, requestedAt: now, windowMinutes,
      plannedWindowMinutes: record.window_minutes,
    };
    try {
      await startReplayWorkflow(this.deps.client(), this.deps.taskQueue, input);
    } catch (err) {
      // The reconciler started it while this start was slow (Temporal restarting, say): it runs, which is what was asked.
      if (err instanceof WorkflowExecutionAlreadyStartedError) return record;
      await this.failToStart(record, unavailable('Temporal', err), 'the workflow could not start');
    }
    return record;
  }

  /**
   * Fails the replay that could not be started and throws `err` (an AppError:
   * the ledger's or Temporal's 503). If the store refuses too, the answer is
   * still 503 (with that cause): the replay stays queued, and the reconciler
   * fails it unless the ledger holds its request.
   */
  private async failToStart(record: ReplayRecord, err: unknown, message: string): Promise<never> {
    try {
      await this.deps.replays.put({ ...record, status: 'failed', error: { code: 'UNAVAILABLE', message }, version: 2 });
    } catch (storeErr) {
      throw unavailable('replay store', new AggregateError([err, storeErr], message));
    }
    throw err;
  }

  list(orgId: string, opts: Parameters<ReplaysRepo['list']>[1]): Promise<ReplayRecord[]> {
    return this.deps.replays.list(orgId, opts);
  }

  /** The stored record, with the live status from the workflow while it runs. */
  async get(orgId: string, replayId: string, liveDeadlineMs = liveStatusDeadlineMs): Promise<ReplayRecord> {
    const record = await this.deps.replays.get(orgId, replayId);
    if (!record) throw notFound('replay');
    if (terminalStatuses.includes(record.status)) return record;
    try {
      // A query waits for a worker to take it: without one polling, the stored state answers after a short wait.
      const client = this.deps.client();
      const live = await client.withDeadline(Date.now() + liveDeadlineMs, () =>
        client.workflow.getHandle(replayWorkflowId(orgId, replayId)).query(replayStatusQuery),
      );
      return {
        ...record,
        status: live.status,
        // The stored record may be older than the live status (read first): a state past it carries its window too.
        window_minutes: live.window_minutes || record.window_minutes,
        approvals: live.approvals,
        error: live.error,
        report: live.report ?? record.report,
        decision_deadline: live.decision_deadline ?? record.decision_deadline,
        approval_policies: live.approval_policies ?? record.approval_policies,
      };
    } catch {
      // The workflow cannot answer now (finished, or no worker polling): the stored state is the latest known.
      return record;
    }
  }

  /**
   * Sends the decision to the workflow with a token signed for it: the
   * caller's key was authenticated, and the token proves it to the worker
   * (a key id alone proves nothing: key ids are not secrets). The workflow
   * checks the token and the key again (it may have been revoked since this
   * process cached it) and audits the decision itself, as it does for a raw
   * signal: this service writes no entry.
   */
  async decide(orgId: string, by: Principal, replayId: string, decision: 'approve' | 'deny', comment?: string): Promise<ReplayRecord> {
    // The decision is judged on the live status: it may wait as long as the decision itself would.
    const record = await this.get(orgId, replayId, decisionDeadlineMs);
    if (record.status !== 'awaiting_approval') throw conflict(`the replay is ${record.status}, not awaiting approval`);
    if (record.requested_by === by.keyId) throw forbidden('a replay cannot be approved or denied with the key that requested it');
    // The worker checks again (and everything else); this spares the person a round trip for the plainest case.
    if (samePerson(record.requested_by_person, by.person)) throw forbidden('a replay cannot be approved or denied by the person who requested it, with any of their credentials');
    const client = this.deps.client();
    const workflowId = replayWorkflowId(orgId, replayId);
    const approver = approverOfPrincipal(by);
    const decisionToken = this.deps.decisionTokens.mint(
      { orgId, runId: replayId, workflowId, approverKeyId: approver.approverKeyId, approverPerson: approver.approverPerson, via: approver.approverVia, decision },
      Date.now(),
    );
    try {
      // An update waits for a worker to take it: without one polling, the approver gets 503, not a hung request.
      await client.withDeadline(Date.now() + decisionDeadlineMs, () =>
        client.workflow.getHandle(workflowId).executeUpdate(decideUpdate, {
          args: [{ decision, ...approver, comment, decisionToken }],
        }),
      );
    } catch (err) {
      throw decisionError(err);
    }
    return record;
  }
}

/** What a failed `decide` update means for the approver. */
function decisionError(err: unknown): AppError {
  if (err instanceof AppError) return err;
  if (err instanceof WorkflowUpdateFailedError) {
    const cause = err.cause instanceof ApplicationFailure ? err.cause : undefined;
    if (cause?.type === decisionFailures.refused) return forbidden(cause.message);
    if (cause?.type === decisionFailures.unverifiable) return unavailable('the approver check', err);
    // Another approver decided first, or the replay stopped waiting (expired) meanwhile.
    return conflict('the replay is no longer awaiting a decision');
  }
  if (err instanceof WorkflowNotFoundError) return conflict('the replay is no longer awaiting a decision');
  return unavailable('Temporal', err);
}
