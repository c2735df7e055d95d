import { replayWorkflowId } from '../../application/replay-service';
import { DecisionTokens } from '../../core/decision-token';
import { approveSignal } from '../../workflows/replay';
import { startTestStack, testPerson, type MintedTestKey, type TestStack } from '../support/test-stack';
import type { AuditEntryView, ErrorBody, IncidentView, Page, ReplayRequested } from '../support/api-types';
import { replayInStatus } from '../support/replays';
import { waitFor } from '../support/wait';

/**
 * Four eyes between persons, not keys (issue 21), on the real Temporal dev
 * server: one person holding two keys still decides nothing of their own, a
 * service key decides nothing, and whoever just changed the policies does not
 * approve under them; the raw signal door refuses the same, and each refusal
 * is audited.
 */
const objectContaining = (shape: object): unknown => expect.objectContaining(shape);
const stringContaining = (text: string): unknown => expect.stringContaining(text);

const signal = { telemetry: 'bgp', service: 'edge', environment: 'prod', region: 'us-east-1', asn: 64500, latency_ms: 40 };

describe('governance: four eyes between persons', () => {
  let t: TestStack;
  beforeAll(async () => {
    t = await startTestStack('chdb', { ROLES: 'api,stream-workers,temporal-worker', WORKER_MAX_WAIT_MS: '20' });
  });
  afterAll(async () => {
    await t.stop();
  });

  /** A workspace whose operator (a person of their own) wrote a gate policy and requested a replay that now waits. */
  async function waitingReplay() {
    const operator = await t.mintKey({ role: 'operator' });
    await t.request('POST', '/ingest', { key: operator.key, body: signal });
    const incident = await waitFor(async () => (await t.request<Page<IncidentView>>('GET', '/v1/incidents', { key: operator.key })).body.data[0]);
    expect((await t.request('POST', '/v1/policies', { key: operator.key, body: { name: 'gate', requires_approval: true } })).status).toBe(201);
    const id = (await t.request<ReplayRequested>('POST', '/v1/replay', { key: operator.key, body: { incident_id: incident.id } })).body.replay_id;
    await replayInStatus(t, operator.key, id, 'awaiting_approval');
    return { operator, id };
  }

  const refusals = async (key: string, id: string) =>
    (await t.request<Page<AuditEntryView>>('GET', '/v1/audit?limit=1000', { key })).body.data.filter((e) => e.action === 'replay.decision_refused' && e.target === id);

  const approve = (key: MintedTestKey, id: string) => t.request<ErrorBody>('POST', `/v1/replays/${id}/approve`, { key: key.key });

  test('a person holding an approver key besides the key that requested a replay cannot approve it, and the refusal is audited', async () => {
    const { operator, id } = await waitingReplay();
    const ownApprover = await t.mintKey({ role: 'approver', orgId: operator.org_id, owner: operator.owner });

    const res = await approve(ownApprover, id);
    expect([res.status, res.body.error.code]).toEqual([403, 'FORBIDDEN']);
    expect(res.body.error.message).toContain('person who requested it');
    const replay = await replayInStatus(t, operator.key, id, 'awaiting_approval');
    expect(replay.requested_by_person).toEqual(operator.owner);
  });

  test('another person approves the same replay, and the replay, its approval and the ledger name that person', async () => {
    const { operator, id } = await waitingReplay();
    const other = await t.mintKey({ role: 'approver', orgId: operator.org_id, owner: testPerson('Other Approver') });
    expect((await approve(other, id)).status).toBe(202);
    const done = await replayInStatus(t, operator.key, id, 'completed');
    expect(done.approvals).toEqual([objectContaining({ approver_key_id: other.key_id, person: other.owner })]);
    const entries = (await t.request<Page<AuditEntryView>>('GET', '/v1/audit?limit=1000', { key: operator.key })).body.data;
    expect(entries.find((e) => e.action === 'replay.approve' && e.target === id)).toMatchObject({ actor: other.key_id, actor_person: other.owner });
    expect(entries.find((e) => e.action === 'replay.request' && e.target === id)).toMatchObject({ actor: operator.key_id, actor_person: operator.owner });
  });

  test('a service key with the approver role cannot approve: 403, audited as service_key', async () => {
    const { operator, id } = await waitingReplay();
    const service = await t.mintKey({ role: 'approver', orgId: operator.org_id, owner: 'service' });
    const res = await approve(service, id);
    expect([res.status, res.body.error.message]).toEqual([403, stringContaining('service key')]);
    const refused = await waitFor(async () => (await refusals(operator.key, id))[0], 10_000, 'the refusal');
    expect(refused).toMatchObject({ actor: service.key_id, actor_person: null, details: objectContaining({ reason: 'service_key', via: 'update' }) });
  });

  test('a workspace admin cannot invent a second person: their service key mints no key owned by a person, so no ghost approves their replay', async () => {
    const { operator, id } = await waitingReplay();
    const admin = await t.mintKey({ role: 'admin', orgId: operator.org_id, owner: operator.owner });
    const minted = await t.request<{ key: string }>('POST', '/v1/api-keys', { key: admin.key, body: { role: 'admin', owner: 'service' } });
    expect(minted.status).toBe(201);

    const ghost = await t.request<ErrorBody>('POST', '/v1/api-keys', { key: minted.body.key, body: { role: 'approver', owner: { subject: 'ghost', name: 'Ghost' } } });
    expect([ghost.status, ghost.body.error.code, ghost.body.error.message]).toEqual([403, 'FORBIDDEN', stringContaining('service key')]);
    const keys = (await t.request<Page<{ owner: unknown }>>('GET', '/v1/api-keys?limit=100', { key: admin.key })).body.data;
    expect(keys.filter((k) => JSON.stringify(k.owner).includes('ghost'))).toEqual([]);
    await replayInStatus(t, operator.key, id, 'awaiting_approval');
  });

  test('an operator who just changed the policy in force cannot approve under it with their approver key; a different person can', async () => {
    const { operator, id } = await waitingReplay();
    const author = testPerson('Policy Author');
    const authorOperator = await t.mintKey({ role: 'operator', orgId: operator.org_id, owner: author });
    const authorApprover = await t.mintKey({ role: 'approver', orgId: operator.org_id, owner: author });
    const changed = await t.request('POST', '/v1/policies', { key: authorOperator.key, body: { name: 'stricter', requires_approval: true } });
    expect(changed.status).toBe(201);

    const res = await approve(authorApprover, id);
    expect([res.status, res.body.error.message]).toEqual([403, stringContaining('changed a policy of this workspace')]);
    const refused = await waitFor(async () => (await refusals(operator.key, id))[0], 10_000, 'the refusal');
    expect(refused).toMatchObject({ actor: authorApprover.key_id, actor_person: author, details: objectContaining({ reason: 'policy_author' }) });

    const other = await t.mintKey({ role: 'approver', orgId: operator.org_id });
    expect((await approve(other, id)).status).toBe(202);
    await replayInStatus(t, operator.key, id, 'completed');
  });

  test('an operator who just changed the policy may still deny under it: denying only stops things', async () => {
    const { operator, id } = await waitingReplay();
    const author = testPerson('Policy Author');
    const authorOperator = await t.mintKey({ role: 'operator', orgId: operator.org_id, owner: author });
    const authorApprover = await t.mintKey({ role: 'approver', orgId: operator.org_id, owner: author });
    expect((await t.request('POST', '/v1/policies', { key: authorOperator.key, body: { name: 'stricter', requires_approval: true } })).status).toBe(201);
    expect((await t.request('POST', `/v1/replays/${id}/deny`, { key: authorApprover.key })).status).toBe(202);
    await replayInStatus(t, operator.key, id, 'denied');
  });

  test("a raw approve signal with a valid token for the requester's own approver key is refused as the requester's, and changes nothing", async () => {
    const { operator, id } = await waitingReplay();
    const ownApprover = await t.mintKey({ role: 'approver', orgId: operator.org_id, owner: operator.owner });
    const person = operator.owner === 'service' ? null : operator.owner;
    const workflowId = replayWorkflowId(operator.org_id, id);
    const claims = { orgId: operator.org_id, runId: id, workflowId, approverKeyId: ownApprover.key_id, approverPerson: person, via: 'api_key' as const, decision: 'approve' as const };
    const decisionToken = new DecisionTokens(t.stack.config.decisions.signingKey!).mint(claims, Date.now());
    await t.stack.temporal.client.workflow.getHandle(workflowId).signal(approveSignal, { approverKeyId: ownApprover.key_id, approverPerson: person, approverVia: 'api_key', decisionToken });

    const refused = await waitFor(async () => (await refusals(operator.key, id))[0], 20_000, 'the refusal');
    expect(refused).toMatchObject({ actor: ownApprover.key_id, details: objectContaining({ reason: 'requester', via: 'signal' }) });
    await replayInStatus(t, operator.key, id, 'awaiting_approval');
  });
});
