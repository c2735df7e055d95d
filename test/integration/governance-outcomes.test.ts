import { replayWorkflowId } from '../../application/replay-service';
import { replayWorkflow } from '../../workflows/replay';
import type { ReplayInput, ReplayState } from '../../workflows/replay-contract';
import { startTestStack, type TestStack } from '../support/test-stack';
import type { AuditEntryView, IncidentView, Page, ReplayRequested } from '../support/api-types';
import { waitFor } from '../support/wait';
import { replayInStatus } from '../support/replays';

/**
 * Denied and expired replays are business outcomes: their workflows complete
 * normally and return the final state, as Temporal itself reports. (The
 * expiry runs on a real 3-second timeout: the time-skipping test server
 * is a binary @temporalio/testing downloads, which this machine cannot.)
 */
/** Jest's asymmetric matchers, typed as what they are to the compiler: values to compare with. */
const stringContaining = (text: string): unknown => expect.stringContaining(text);
const objectContaining = (shape: object): unknown => expect.objectContaining(shape);

const signal = { telemetry: 'bgp', service: 'edge', environment: 'prod', region: 'us-east-1', asn: 64500, latency_ms: 40 };

describe('governance: how a replay workflow ends', () => {
  let t: TestStack;
  beforeAll(async () => {
    t = await startTestStack('chdb', { ROLES: 'api,stream-workers,temporal-worker', WORKER_MAX_WAIT_MS: '20' });
  });
  afterAll(async () => {
    await t.stop();
  });

  async function workspaceWithIncident() {
    const operator = await t.mintKey({ role: 'operator' });
    const approver = await t.mintKey({ role: 'approver', orgId: operator.org_id });
    await t.request('POST', '/ingest', { key: operator.key, body: signal });
    const incident = await waitFor(async () => (await t.request<Page<IncidentView>>('GET', '/v1/incidents', { key: operator.key })).body.data[0]);
    return { operator, approver, incident };
  }

  const replayState = (key: string, id: string, status: string) => replayInStatus(t, key, id, status);

  /** What Temporal says of the workflow once it ended: its status and its result. */
  async function workflowOutcome(orgId: string, replayId: string) {
    const handle = t.stack.temporal.client.workflow.getHandle<typeof replayWorkflow>(replayWorkflowId(orgId, replayId));
    const result: ReplayState = await handle.result();
    return { status: (await handle.describe()).status.name, result };
  }

  test('a replay denied by an approver completes its workflow, whose result is the denied state', async () => {
    const { operator, approver, incident } = await workspaceWithIncident();
    await t.request('POST', '/v1/policies', { key: operator.key, body: { name: 'gate', requires_approval: true } });
    const id = (await t.request<ReplayRequested>('POST', '/v1/replay', { key: operator.key, body: { incident_id: incident.id } })).body.replay_id;
    await replayState(operator.key, id, 'awaiting_approval');
    expect((await t.request('POST', `/v1/replays/${id}/deny`, { key: approver.key, body: { comment: 'not now' } })).status).toBe(202);

    const outcome = await workflowOutcome(operator.org_id, id);
    expect(outcome.status).toBe('COMPLETED');
    expect(outcome.result).toMatchObject({
      status: 'denied',
      error: { code: 'POLICY_DENIED', message: `Execution blocked by policy: denied by approver ${approver.key_id}` },
      approvals: [objectContaining({ decision: 'deny', approver_key_id: approver.key_id, comment: 'not now' })],
      report: null,
    });
    const audit = (await t.request<Page<AuditEntryView>>('GET', '/v1/audit', { key: operator.key })).body.data;
    expect(audit.filter((e) => e.action === 'replay.deny')).toEqual([
      objectContaining({ actor: approver.key_id, target: id, details: { comment: 'not now', via: 'update', attempt: 1 } }),
    ]);
  });

  test('a replay whose approval expires completes its workflow, whose result is the expired state', async () => {
    const { operator, incident } = await workspaceWithIncident();
    await t.request('POST', '/v1/policies', { key: operator.key, body: { name: 'quick gate', requires_approval: true, approval_timeout_minutes: 0.05 } });
    const id = (await t.request<ReplayRequested>('POST', '/v1/replay', { key: operator.key, body: { incident_id: incident.id } })).body.replay_id;

    const outcome = await workflowOutcome(operator.org_id, id);
    expect(outcome.status).toBe('COMPLETED');
    expect(outcome.result).toMatchObject({ status: 'expired', error: { code: 'APPROVAL_EXPIRED' }, approvals: [], report: null });
    expect((await replayState(operator.key, id, 'expired')).error?.code).toBe('APPROVAL_EXPIRED');
  });

  test('a replay a policy denies when its workflow runs completes its workflow, whose result is the denied state', async () => {
    const { operator, incident } = await workspaceWithIncident();
    // The API refuses such a request itself; an operator starting the workflow directly meets the workflow's own check.
    await t.request('POST', '/v1/policies', { key: operator.key, body: { name: 'freeze', requires_approval: false, allow_execution: false } });
    const input: ReplayInput = { orgId: operator.org_id, replayId: 'rep_direct0000000000', incidentId: incident.id, requestedBy: operator.key_id, requestedAt: Date.now() };
    await t.stack.temporal.client.workflow.start(replayWorkflow, {
      taskQueue: t.stack.config.temporal.taskQueue,
      workflowId: replayWorkflowId(input.orgId, input.replayId),
      args: [input],
    });

    const outcome = await workflowOutcome(input.orgId, input.replayId);
    expect(outcome.status).toBe('COMPLETED');
    expect(outcome.result).toMatchObject({ status: 'denied', error: { code: 'POLICY_DENIED', message: stringContaining('Execution blocked by policy') } });
  });

  test('every state the replay workflow records tells its window, the one recorded before the run prepares included', async () => {
    const { operator, incident } = await workspaceWithIncident();
    const id = (await t.request<ReplayRequested>('POST', '/v1/replay', { key: operator.key, body: { incident_id: incident.id } })).body.replay_id;
    const done = await replayState(operator.key, id, 'completed');
    expect(done.window_minutes).toBeGreaterThan(0);

    // Read from the workflow's history, which keeps every state it recorded (the stored versions may be merged away).
    const history = await t.stack.temporal.client.workflow.getHandle(replayWorkflowId(operator.org_id, id)).fetchHistory();
    const recorded = (history.events ?? [])
      .map((e) => e.activityTaskScheduledEventAttributes)
      .filter((a) => a?.activityType?.name === 'recordReplayState')
      .map((a) => (JSON.parse(Buffer.from(a!.input!.payloads![0]!.data!).toString()) as { state: { status: string; window_minutes: number } }).state);
    expect(recorded.map((r) => [r.status, r.window_minutes])).toEqual([['running', done.window_minutes], ['completed', done.window_minutes]]);
  });
});
