import { ApplicationFailure, WorkflowNotFoundError, WorkflowUpdateFailedError, type Client } from '@temporalio/client';
import type { DecisionTokens } from '../core/decision-token';
import { AppError, conflict, forbidden, notFound, policyDenied, unavailable } from '../core/errors';
import type { AutomationRecord, AutomationsRepo } from '../storage/automations-repo';
import { changeFailures, decideAutomationUpdate, decisionFailures, extendAutomationUpdate, withdrawAutomationUpdate } from '../workflows/automation-messages';
import type { AutomationState } from '../workflows/automation-contract';
import { automationWorkflowId } from './automation-runs';
import { approverOfPrincipal, type Principal } from '../core/principal';

/** An update waits for a worker to take it: without one polling, the approver gets 503, not a hung request. */
const updateDeadlineMs = 15_000;

/** The mitigations a workspace has announced now, as the runs recorded them. */
export interface ActiveMitigation {
  org_id: string;
  automation_id: string;
  incident_id: string;
  id: string;
  type: string;
  destination: string;
  starts_at: number;
  ends_at: number;
}

/**
 * Reads automation runs and carries people's decisions to them: approve or
 * deny a waiting run, withdraw or extend an active one. Each goes to the
 * run's workflow as an update with a token this API signs for that run, key
 * and decision; the workflow checks it and the key again, and audits.
 */
export class AutomationService {
  constructor(
    private readonly deps: {
      client: () => Client;
      automations: AutomationsRepo;
      decisionTokens: Pick<DecisionTokens, 'mint'>;
      now?: () => number;
    },
  ) {}

  list(orgId: string, opts: Parameters<AutomationsRepo['list']>[1]): Promise<AutomationRecord[]> {
    return this.deps.automations.list(orgId, opts);
  }

  async get(orgId: string, automationId: string): Promise<AutomationRecord> {
    const record = await this.deps.automations.get(orgId, automationId);
    if (!record) throw notFound('automation');
    return record;
  }

  /** Every mitigation the active runs of a workspace (of every workspace, for the platform admin) hold now, soonest end first. */
  async active(orgId?: string): Promise<ActiveMitigation[]> {
    const now = (this.deps.now ?? Date.now)();
    const runs = await this.deps.automations.active(orgId);
    return runs
      .flatMap((r) =>
        r.actions
          .filter((a) => a.destination !== null && a.starts_at !== undefined && a.ends_at !== undefined && a.ends_at > now && a.withdrawn_at === undefined)
          .map((a) => ({ org_id: r.org_id, automation_id: r.automation_id, incident_id: r.incident_id, id: a.id, type: a.type, destination: a.destination!, starts_at: a.starts_at!, ends_at: a.ends_at! })),
      )
      .sort((a, b) => a.ends_at - b.ends_at || a.id.localeCompare(b.id));
  }

  async decide(orgId: string, by: Principal, automationId: string, decision: 'approve' | 'deny', comment?: string): Promise<AutomationRecord> {
    const record = await this.get(orgId, automationId);
    if (record.status !== 'awaiting_approval') throw conflict(`the automation is ${record.status}, not awaiting approval`);
    await this.update(orgId, by, automationId, decision, (handle, token) =>
      handle.executeUpdate(decideAutomationUpdate, { args: [{ decision, ...approverOfPrincipal(by), comment, decisionToken: token }] }),
    );
    return record;
  }

  async withdraw(orgId: string, by: Principal, automationId: string, comment?: string): Promise<AutomationRecord> {
    const record = await this.get(orgId, automationId);
    if (record.status !== 'active') throw conflict(`the automation is ${record.status}, not active`);
    const state = await this.update(orgId, by, automationId, 'withdraw', (handle, token) =>
      handle.executeUpdate(withdrawAutomationUpdate, { args: [{ ...approverOfPrincipal(by), comment, decisionToken: token }] }),
    );
    return withState(record, state as AutomationState);
  }

  async extend(orgId: string, by: Principal, automationId: string, minutes: number, comment?: string): Promise<AutomationRecord> {
    const record = await this.get(orgId, automationId);
    if (record.status !== 'active') throw conflict(`the automation is ${record.status}, not active`);
    const state = await this.update(
      orgId,
      by,
      automationId,
      'extend',
      (handle, token) => handle.executeUpdate(extendAutomationUpdate, { args: [{ ...approverOfPrincipal(by), comment, minutes, decisionToken: token }] }),
      String(minutes),
    );
    return withState(record, state as AutomationState);
  }

  private async update(
    orgId: string,
    by: Principal,
    automationId: string,
    decision: 'approve' | 'deny' | 'withdraw' | 'extend',
    send: (handle: ReturnType<Client['workflow']['getHandle']>, token: string) => Promise<unknown>,
    detail?: string,
  ): Promise<unknown> {
    const client = this.deps.client();
    const workflowId = automationWorkflowId(orgId, automationId);
    const approver = approverOfPrincipal(by);
    const claims = { orgId, runId: automationId, workflowId, approverKeyId: approver.approverKeyId, approverPerson: approver.approverPerson, via: approver.approverVia, decision };
    const token = this.deps.decisionTokens.mint({ ...claims, ...(detail === undefined ? {} : { detail }) }, Date.now());
    try {
      return await client.withDeadline(Date.now() + updateDeadlineMs, () => send(client.workflow.getHandle(workflowId), token));
    } catch (err) {
      throw updateError(err);
    }
  }
}

/** The stored run with the state the workflow answered an update with: the store may not hold that step yet. */
const withState = (record: AutomationRecord, state: AutomationState): AutomationRecord => ({
  ...record,
  status: state.status,
  approvals: state.approvals,
  actions: state.actions,
  error: state.error,
});

/** What a failed update means for the person who sent it. */
function updateError(err: unknown): AppError {
  if (err instanceof AppError) return err;
  if (err instanceof WorkflowUpdateFailedError) {
    const cause = err.cause instanceof ApplicationFailure ? err.cause : undefined;
    if (cause?.type === decisionFailures.refused || cause?.type === changeFailures.refused) return forbidden(cause.message);
    if (cause?.type === decisionFailures.unverifiable || cause?.type === changeFailures.unverifiable) return unavailable('the approver check', err);
    if (cause?.type === changeFailures.denied) return policyDenied(cause.message);
    return conflict('the automation is no longer in a state that takes this');
  }
  if (err instanceof WorkflowNotFoundError) return conflict('the automation is no longer in a state that takes this');
  return unavailable('Temporal', err);
}
