import { replayWorkflowId } from '../../application/replay-service';
import { createLogger } from '../../observability/logger';
import { temporalWorkerRole } from '../../service/roles/temporal-worker';
import { recordHistory } from '../support/histories';
import { startTestStack, type TestStack } from '../support/test-stack';
import type { AuditEntryView, ErrorBody, IncidentView, Page, PolicyView, ReplayRequested, ReplayView } from '../support/api-types';
import { waitFor } from '../support/wait';
import { replayInStatus } from '../support/replays';

/** Jest's asymmetric matchers, typed as what they are to the compiler: values to compare with. */
const stringMatching = (pattern: RegExp): unknown => expect.stringMatching(pattern);
const stringContaining = (text: string): unknown => expect.stringContaining(text);
const objectContaining = (shape: object): unknown => expect.objectContaining(shape);

/** The Temporal worker's start lines among a stack's JSON log lines. */
const pollingLines = (logs: string[]): unknown[] =>
  logs.map((line) => JSON.parse(line) as { msg?: string }).filter((entry) => entry.msg === 'temporal worker polling');

const signal = { telemetry: 'bgp', service: 'edge', environment: 'prod', region: 'us-east-1', asn: 64500, latency_ms: 40 };

describe('governance: policies, replays and approvals on the real Temporal dev server', () => {
  let t: TestStack;
  beforeAll(async () => {
    t = await startTestStack('chdb', { ROLES: 'api,stream-workers,temporal-worker', WORKER_MAX_WAIT_MS: '20' });
  });
  afterAll(async () => {
    await t.stop();
  });

  async function workspaceWithIncident(over: Record<string, unknown> = {}) {
    const operator = await t.mintKey({ role: 'operator' });
    const approver = await t.mintKey({ role: 'approver', orgId: operator.org_id });
    await t.request('POST', '/ingest', { key: operator.key, body: { ...signal, ...over } });
    const incident = await waitFor(async () => (await t.request<Page<IncidentView>>('GET', '/v1/incidents', { key: operator.key })).body.data[0]);
    return { operator, approver, incident };
  }

  const replayState = (key: string, id: string, status: string) => replayInStatus(t, key, id, status);

  test('the approve path completes with a report saying parity true for an untouched incident', async () => {
    const { operator, approver, incident } = await workspaceWithIncident();
    const policy = await t.request<PolicyView>('POST', '/v1/policies', { key: operator.key, body: { name: 'prod needs a human', requires_approval: true } });
    expect(policy.status).toBe(201);
    expect(policy.body).toMatchObject({ policy_id: stringMatching(/^pol_/), id: policy.body.policy_id, status: 'active' });

    const requested = await t.request<ReplayRequested>('POST', '/v1/replay', { key: operator.key, body: { incident_id: incident.id } });
    expect(requested.status).toBe(202);
    expect(requested.body).toMatchObject({ replay_id: stringMatching(/^rep_/), status: 'queued' });
    const id = requested.body.replay_id;

    await replayState(operator.key, id, 'awaiting_approval');
    const waiting = await t.request<Page<ReplayView>>('GET', '/v1/approvals', { key: approver.key });
    expect(waiting.body.data.map((r: { replay_id: string }) => r.replay_id)).toEqual([id]);

    const approved = await t.request('POST', `/v1/replays/${id}/approve`, { key: approver.key, body: { comment: 'looks right' } });
    expect(approved.status).toBe(202);
    const done = await replayState(operator.key, id, 'completed');
    expect(done.approvals).toEqual([objectContaining({ decision: 'approve', approver_key_id: approver.key_id, comment: 'looks right' })]);
    expect(done.report).toMatchObject({ parity: true, differences: [], recorded: { id: incident.id }, replayed: { id: incident.id } });
    await recordHistory(t, 'replay-approved', replayWorkflowId(operator.org_id, id));
  });

  test('a replay awaiting approval carries the deadline its workflow set and the policies that asked for approval', async () => {
    const { operator, incident } = await workspaceWithIncident();
    const slow = await t.request<PolicyView>('POST', '/v1/policies', { key: operator.key, body: { name: 'slow gate', requires_approval: true, approval_timeout_minutes: 90 } });
    const fast = await t.request<PolicyView>('POST', '/v1/policies', { key: operator.key, body: { name: 'fast gate', requires_approval: true, approval_timeout_minutes: 30 } });
    const requestedAt = Date.now();
    const id = (await t.request<ReplayRequested>('POST', '/v1/replay', { key: operator.key, body: { incident_id: incident.id } })).body.replay_id;
    const waiting = await replayState(operator.key, id, 'awaiting_approval');
    // The shortest timeout of the gating policies applies, from when the gate opened.
    const deadline = Date.parse(waiting.decision_deadline ?? '');
    expect(deadline).toBeGreaterThanOrEqual(requestedAt + 30 * 60_000);
    expect(deadline).toBeLessThanOrEqual(Date.now() + 30 * 60_000);
    expect(waiting.approval_policies).toEqual([slow.body.policy_id, fast.body.policy_id].sort());
    // The stored record (what /v1/approvals lists) says the same as the workflow.
    const listed = await t.request<Page<ReplayView>>('GET', '/v1/approvals', { key: operator.key });
    expect(listed.body.data.find((r) => r.replay_id === id)).toMatchObject({ decision_deadline: waiting.decision_deadline, approval_policies: waiting.approval_policies });
  });

  test('the deny path ends denied carrying POLICY_DENIED', async () => {
    const { operator, approver, incident } = await workspaceWithIncident();
    await t.request('POST', '/v1/policies', { key: operator.key, body: { name: 'gate', requires_approval: true } });
    const id = (await t.request<ReplayRequested>('POST', '/v1/replay', { key: operator.key, body: { incident_id: incident.id } })).body.replay_id;
    await replayState(operator.key, id, 'awaiting_approval');
    expect((await t.request('POST', `/v1/replays/${id}/deny`, { key: approver.key })).status).toBe(202);
    const denied = await replayState(operator.key, id, 'denied');
    expect(denied.error).toEqual({ code: 'POLICY_DENIED', message: stringContaining('Execution blocked') });
    await recordHistory(t, 'replay-denied', replayWorkflowId(operator.org_id, id));
  });

  test('an approval that never comes ends the replay expired after the policy timeout', async () => {
    const { operator, incident } = await workspaceWithIncident();
    await t.request('POST', '/v1/policies', { key: operator.key, body: { name: 'quick gate', requires_approval: true, approval_timeout_minutes: 0.05 } });
    const id = (await t.request<ReplayRequested>('POST', '/v1/replay', { key: operator.key, body: { incident_id: incident.id } })).body.replay_id;
    const expired = await replayState(operator.key, id, 'expired');
    expect(expired.error?.code).toBe('APPROVAL_EXPIRED');
    await recordHistory(t, 'replay-expired', replayWorkflowId(operator.org_id, id));
  });

  test('allow_execution false answers 403 POLICY_DENIED and starts no workflow', async () => {
    const { operator, incident } = await workspaceWithIncident();
    await t.request('POST', '/v1/policies', { key: operator.key, body: { name: 'freeze', requires_approval: false, allow_execution: false } });
    const res = await t.request<ErrorBody>('POST', '/v1/replay', { key: operator.key, body: { incident_id: incident.id } });
    expect(res.status).toBe(403);
    expect(res.body).toEqual({ error: { code: 'POLICY_DENIED', message: stringContaining('Execution blocked by policy') } });
    expect((await t.request<Page<ReplayView>>('GET', '/v1/replays', { key: operator.key })).body.data).toEqual([]);
    const workflows = t.stack.temporal.client.workflow.list({ query: `WorkflowId STARTS_WITH "replay:${operator.org_id}:"` });
    const started: string[] = [];
    for await (const w of workflows) started.push(w.workflowId);
    expect(started).toEqual([]);
    const audit = await t.request<Page<AuditEntryView>>('GET', '/v1/audit', { key: operator.key });
    expect(audit.body.data[0]).toMatchObject({ action: 'replay.blocked', target: incident.id });
  });

  test('an analyst key cannot approve: 403 FORBIDDEN', async () => {
    const { operator, incident } = await workspaceWithIncident();
    const analyst = await t.mintKey({ role: 'analyst', orgId: operator.org_id });
    await t.request('POST', '/v1/policies', { key: operator.key, body: { name: 'gate', requires_approval: true } });
    const id = (await t.request<ReplayRequested>('POST', '/v1/replay', { key: operator.key, body: { incident_id: incident.id } })).body.replay_id;
    await replayState(operator.key, id, 'awaiting_approval');
    const res = await t.request<ErrorBody>('POST', `/v1/replays/${id}/approve`, { key: analyst.key });
    expect(res.status).toBe(403);
    expect(res.body.error.code).toBe('FORBIDDEN');
  });

  test('a replay without a gating policy completes on its own', async () => {
    const { operator, incident } = await workspaceWithIncident();
    const id = (await t.request<ReplayRequested>('POST', '/v1/replay', { key: operator.key, body: { incident_id: incident.id } })).body.replay_id;
    const done = await replayState(operator.key, id, 'completed');
    expect(done.report?.parity).toBe(true);
    await recordHistory(t, 'replay-ungated', replayWorkflowId(operator.org_id, id));
  });

  test('a replay of another workspace incident is 404', async () => {
    const { incident } = await workspaceWithIncident();
    const stranger = await t.mintKey({ role: 'operator' });
    const res = await t.request<ErrorBody>('POST', '/v1/replay', { key: stranger.key, body: { incident_id: incident.id } });
    expect(res.status).toBe(404);
  });

  test('a replay waiting for approval survives its Temporal worker being replaced by one that bundles the workflows itself', async () => {
    const { operator, approver, incident } = await workspaceWithIncident();
    await t.request('POST', '/v1/policies', { key: operator.key, body: { name: 'gate', requires_approval: true } });
    const id = (await t.request<ReplayRequested>('POST', '/v1/replay', { key: operator.key, body: { incident_id: incident.id } })).body.replay_id;
    await replayState(operator.key, id, 'awaiting_approval');
    // The stack's worker loaded the run's prebuilt bundle (TEMPORAL_WORKFLOW_BUNDLE, built by the global set-up).
    expect(pollingLines(t.logs)).toEqual([objectContaining({ prebuilt: true })]);

    const stack = t.stack;
    await stack.temporalWorker!.stop();
    const replacementLogs: string[] = [];
    const adapters = { ...stack.adapters, log: createLogger('info', 'test', { write: (line: string) => void replacementLogs.push(line) }) };
    const addresses = { natsUrl: process.env.TEST_NATS_URL!, temporalAddress: process.env.TEST_TEMPORAL_ADDRESS! };
    // Given no bundle, the replacement bundles workflows/ when it starts, as a worker does without the set-up's.
    const config = { ...stack.config, temporal: { ...stack.config.temporal, workflowBundlePath: undefined } };
    const replacement = temporalWorkerRole(config, addresses, adapters);
    for (const component of replacement.components) await component.start();
    try {
      expect(pollingLines(replacementLogs)).toEqual([objectContaining({ prebuilt: false })]);
      expect((await t.request('POST', `/v1/replays/${id}/approve`, { key: approver.key })).status).toBe(202);
      const done = await replayState(operator.key, id, 'completed');
      expect(done.report?.parity).toBe(true);
    } finally {
      for (const component of [...replacement.components].reverse()) await component.stop();
      // The stack's own worker polls again for the tests that follow.
      await stack.temporalWorker!.start();
    }
  });

  test('when two approvers decide at once, one decision is taken and the other gets 409', async () => {
    const { operator, approver, incident } = await workspaceWithIncident();
    const second = await t.mintKey({ role: 'approver', orgId: operator.org_id });
    await t.request('POST', '/v1/policies', { key: operator.key, body: { name: 'gate', requires_approval: true } });
    const id = (await t.request<ReplayRequested>('POST', '/v1/replay', { key: operator.key, body: { incident_id: incident.id } })).body.replay_id;
    await replayState(operator.key, id, 'awaiting_approval');
    const answers = await Promise.all([
      t.request('POST', `/v1/replays/${id}/approve`, { key: approver.key }),
      t.request('POST', `/v1/replays/${id}/deny`, { key: second.key }),
    ]);
    expect(answers.map((a) => a.status).sort()).toEqual([202, 409]);
    const decisions = (await t.request<Page<AuditEntryView>>('GET', '/v1/audit', { key: operator.key })).body.data.filter((e) =>
      ['replay.approve', 'replay.deny'].includes(e.action),
    );
    expect(decisions).toHaveLength(1);
  });

  test('the requester cannot approve their own replay', async () => {
    const { incident, operator } = await workspaceWithIncident();
    await t.request('POST', '/v1/policies', { key: operator.key, body: { name: 'gate', requires_approval: true } });
    const id = (await t.request<ReplayRequested>('POST', '/v1/replay', { key: operator.key, body: { incident_id: incident.id } })).body.replay_id;
    await replayState(operator.key, id, 'awaiting_approval');
    const res = await t.request<ErrorBody>('POST', `/v1/replays/${id}/approve`, { key: operator.key });
    expect(res.status).toBe(403);
  });
});

