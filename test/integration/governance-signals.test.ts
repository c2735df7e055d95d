import fs from 'node:fs';
import path from 'node:path';
import { replayWorkflowId } from '../../application/replay-service';
import { DecisionTokens, decisionTokenTtlMs } from '../../core/decision-token';
import { randomId } from '../../core/ids';
import type { Person } from '../../core/person';
import { metricTotal } from '../support/metrics';
import { KeysRepo } from '../../storage/keys-repo';
import { createApprovalActivities } from '../../workers/governance/activities/approval-activities';
import { WorkflowUpdateFailedError } from '@temporalio/client';
import { approveSignal, decideUpdate, decisionFailures, denySignal, replayStatusQuery } from '../../workflows/replay';
import { withAuditLedger } from '../support/audit-ledger';
import { startTestStack, type TestStack } from '../support/test-stack';
import type { AuditEntryView, IncidentView, Page, ReplayRequested, ReplayView } from '../support/api-types';
import { waitFor } from '../support/wait';
import { replayInStatus } from '../support/replays';

/**
 * Raw `approve` and `deny` signals and `decide` updates, as whoever reaches
 * Temporal sends them: the workflow checks each like the API's decisions
 * (the decision token first, then the key) and audits it, on the real
 * Temporal dev server.
 */

/** Jest's asymmetric matchers, typed as what they are to the compiler: values to compare with. */
const objectContaining = (shape: object): unknown => expect.objectContaining(shape);
const anyString = (): unknown => expect.any(String);
const stringContaining = (text: string): unknown => expect.stringContaining(text);

/** Every text a workflow history carries: payloads are bytes, read as UTF-8. */
function historyText(value: unknown): string {
  if (value instanceof Uint8Array) return Buffer.from(value).toString('utf8');
  if (typeof value === 'string') return value;
  if (value && typeof value === 'object') return Object.values(value).map(historyText).join('\n');
  return '';
}

const signal = { telemetry: 'bgp', service: 'edge', environment: 'prod', region: 'us-east-1', asn: 64500, latency_ms: 40 };

describe('governance: raw approve and deny signals', () => {
  let t: TestStack;
  beforeAll(async () => {
    t = await startTestStack('chdb', { ROLES: 'api,stream-workers,temporal-worker', WORKER_MAX_WAIT_MS: '20' });
  });
  afterAll(async () => {
    await t.stop();
  });

  /** A workspace with an incident, a policy that gates replays, and a replay awaiting approval. */
  async function awaitingReplay() {
    const operator = await mintKey({ role: 'operator' });
    const approver = await mintKey({ role: 'approver', orgId: operator.org_id });
    await t.request('POST', '/ingest', { key: operator.key, body: signal });
    const incident = await waitFor(async () => (await t.request<Page<IncidentView>>('GET', '/v1/incidents', { key: operator.key })).body.data[0]);
    await t.request('POST', '/v1/policies', { key: operator.key, body: { name: 'gate', requires_approval: true } });
    const id: string = (await t.request<ReplayRequested>('POST', '/v1/replay', { key: operator.key, body: { incident_id: incident.id } })).body.replay_id;
    await replayState(operator.key, id, 'awaiting_approval');
    const handle = t.stack.temporal.client.workflow.getHandle(replayWorkflowId(operator.org_id, id));
    return { operator, approver, id, handle };
  }

  const replayState = (key: string, id: string, status: string) => replayInStatus(t, key, id, status);

  async function ledger(key: string): Promise<AuditEntryView[]> {
    return (await t.request<Page<AuditEntryView>>('GET', '/v1/audit?limit=1000', { key })).body.data;
  }

  const refusedCount = () => metricTotal(t.stack.registry, 'nettel_decisions_refused_total');

  /** The person behind each key minted here. */
  const owners = new Map<string, Person | null>();
  const mintKey = async (opts: Parameters<TestStack['mintKey']>[0]) =>
    t.mintKey(opts).then((minted) => (owners.set(minted.key_id, minted.owner === 'service' ? null : minted.owner), minted));

  /** The approver a decision names for a key, as the API names it: the person behind the key. */
  const as = (keyId: string) => ({ approverKeyId: keyId, approverPerson: owners.get(keyId) ?? null, approverVia: 'api_key' as const });

  /** What the API signs for a decision it authenticated: the tests sign as it does, with the stack's key. */
  const tokens = () => new DecisionTokens(t.stack.config.decisions.signingKey!);
  function tokenFor(w: { operator: { org_id: string }; id: string }, keyId: string, decision: 'approve' | 'deny', now = Date.now()): string {
    const { approverPerson, approverVia: via } = as(keyId);
    return tokens().mint({ orgId: w.operator.org_id, runId: w.id, workflowId: replayWorkflowId(w.operator.org_id, w.id), approverKeyId: keyId, approverPerson, via, decision }, now);
  }

  type Awaiting = Awaited<ReturnType<typeof awaitingReplay>>;
  const refusedSenders: Array<[string, string, (w: Awaiting) => Promise<string>]> = [
    ['the requester’s own key', 'requester', (w) => Promise.resolve(w.operator.key_id)],
    ['a key of another workspace', 'unknown_key', async () => (await mintKey({ role: 'approver' })).key_id],
    ['a key that does not exist', 'unknown_key', () => Promise.resolve('key_00000000000000000000')],
    ['a revoked approver key', 'revoked', async (w) => {
      const revoked = await mintKey({ role: 'approver', orgId: w.operator.org_id });
      expect((await t.request('DELETE', `/v1/api-keys/${revoked.key_id}`, { key: t.adminKey })).status).toBe(200);
      return revoked.key_id;
    }],
    ['an expired approver key', 'expired', async (w) => {
      const expiring = await mintKey({ role: 'approver', orgId: w.operator.org_id, expiresInSeconds: 1 });
      // Expired once the API refuses it: the workflow's check reads the same clock.
      await waitFor(async () => ((await t.request('GET', '/v1/incidents', { key: expiring.key })).status === 401 ? true : undefined), 5_000, 'the key to expire');
      return expiring.key_id;
    }],
    ['an analyst key (its role may not approve)', 'not_an_approver', async (w) => (await mintKey({ role: 'analyst', orgId: w.operator.org_id })).key_id],
  ];

  test.each(refusedSenders)('a raw approve signal from %s, even with a token signed for it, changes nothing and is recorded as refused', async (_name, reason, keyOf) => {
    const w = await awaitingReplay();
    const keyId = await keyOf(w);
    const refusedBefore = await refusedCount();
    await w.handle.signal(approveSignal, { ...as(keyId), comment: 'let me in', decisionToken: tokenFor(w, keyId, 'approve') });

    const refused = await waitFor(async () => (await ledger(w.operator.key)).find((e) => e.action === 'replay.decision_refused'), 20_000, 'the refusal');
    expect(refused).toMatchObject({
      actor: keyId,
      target: w.id,
      details: { decision: 'approve', via: 'signal', attempt: 1, reason, message: anyString(), comment: 'let me in' },
    });
    expect(await refusedCount()).toBe(refusedBefore + 1);
    expect((await w.handle.query(replayStatusQuery)).status).toBe('awaiting_approval');
    expect((await w.handle.query(replayStatusQuery)).approvals).toEqual([]);
    expect((await t.request<ReplayView>('GET', `/v1/replays/${w.id}`, { key: w.operator.key })).body.status).toBe('awaiting_approval');

    // A valid approver still decides it afterwards.
    expect((await t.request('POST', `/v1/replays/${w.id}/approve`, { key: w.approver.key })).status).toBe(202);
    const done = await replayState(w.operator.key, w.id, 'completed');
    expect(done.approvals).toEqual([objectContaining({ decision: 'approve', approver_key_id: w.approver.key_id })]);
    const entries = await ledger(w.operator.key);
    expect(entries.filter((e) => ['replay.approve', 'replay.deny'].includes(e.action))).toEqual([
      objectContaining({ action: 'replay.approve', actor: w.approver.key_id, target: w.id, details: objectContaining({ via: 'update' }) }),
    ]);
    expect(entries.filter((e) => e.action === 'replay.decision_refused')).toHaveLength(1);
  });

  test('a raw approve signal from an approver key of the workspace, with the token the API signs, completes the replay and is audited once', async () => {
    const w = await awaitingReplay();
    const decisionToken = tokenFor(w, w.approver.key_id, 'approve');
    await w.handle.signal(approveSignal, { ...as(w.approver.key_id), comment: 'checked with the NOC', decisionToken });
    const done = await replayState(w.operator.key, w.id, 'completed');
    expect(done.approvals).toEqual([
      objectContaining({ decision: 'approve', approver_key_id: w.approver.key_id, comment: 'checked with the NOC' }),
    ]);
    expect(done.report?.parity).toBe(true);
    const decisions = (await ledger(w.operator.key)).filter((e) => e.action.startsWith('replay.') && e.action !== 'replay.request');
    expect(decisions).toEqual([
      objectContaining({
        action: 'replay.approve',
        actor: w.approver.key_id,
        target: w.id,
        details: { comment: 'checked with the NOC', via: 'signal', attempt: 1 },
      }),
    ]);
    await w.handle.result();
    expect((await w.handle.describe()).status.name).toBe('COMPLETED');
  });

  test('a raw deny signal from an approver key of the workspace, with the token the API signs, ends the replay denied and is audited once', async () => {
    const w = await awaitingReplay();
    await w.handle.signal(denySignal, { ...as(w.approver.key_id), decisionToken: tokenFor(w, w.approver.key_id, 'deny') });
    const denied = await replayState(w.operator.key, w.id, 'denied');
    expect(denied.error).toEqual({ code: 'POLICY_DENIED', message: `Execution blocked by policy: denied by approver ${w.approver.key_id}` });
    const decisions = (await ledger(w.operator.key)).filter((e) => ['replay.approve', 'replay.deny', 'replay.decision_refused'].includes(e.action));
    expect(decisions).toEqual([objectContaining({ action: 'replay.deny', actor: w.approver.key_id, target: w.id, details: { via: 'signal', attempt: 1 } })]);
  });

  test('a refused raw signal leaves the replay to the valid one sent after it', async () => {
    const w = await awaitingReplay();
    await w.handle.signal(approveSignal, { ...as(w.operator.key_id), decisionToken: tokenFor(w, w.operator.key_id, 'approve') });
    await w.handle.signal(approveSignal, { ...as(w.approver.key_id), decisionToken: tokenFor(w, w.approver.key_id, 'approve') });
    const done = await replayState(w.operator.key, w.id, 'completed');
    expect(done.approvals).toEqual([objectContaining({ approver_key_id: w.approver.key_id })]);
    const entries = await ledger(w.operator.key);
    expect(entries.filter((e) => e.action === 'replay.decision_refused')).toEqual([
      objectContaining({ actor: w.operator.key_id, details: objectContaining({ reason: 'requester', attempt: 1 }) }),
    ]);
    expect(entries.filter((e) => e.action === 'replay.approve')).toEqual([objectContaining({ actor: w.approver.key_id, details: { via: 'signal', attempt: 2 } })]);
  });

  test('a raw signal without an approver key id is refused without failing the workflow', async () => {
    const w = await awaitingReplay();
    await w.handle.signal(approveSignal, {} as never);
    await waitFor(async () => (await ledger(w.operator.key)).find((e) => e.action === 'replay.decision_refused'), 20_000, 'the refusal');
    expect((await w.handle.query(replayStatusQuery)).status).toBe('awaiting_approval');
    expect((await w.handle.describe()).status.name).toBe('RUNNING');
  });

  test('a raw decide update from the requester’s key, even with a token signed for it, fails as refused, is recorded, and leaves the replay awaiting approval', async () => {
    const w = await awaitingReplay();
    const decisionToken = tokenFor(w, w.operator.key_id, 'approve');
    const update = w.handle.executeUpdate(decideUpdate, { args: [{ decision: 'approve', ...as(w.operator.key_id), decisionToken }] });
    const failure = await update.then(() => undefined, (err: unknown) => err);
    expect(failure).toBeInstanceOf(WorkflowUpdateFailedError);
    expect((failure as WorkflowUpdateFailedError).cause).toMatchObject({ type: decisionFailures.refused });
    const entries = await ledger(w.operator.key);
    expect(entries.filter((e) => e.action.startsWith('replay.') && e.action !== 'replay.request')).toEqual([
      objectContaining({ action: 'replay.decision_refused', actor: w.operator.key_id, details: objectContaining({ via: 'update', reason: 'requester' }) }),
    ]);
    expect((await w.handle.query(replayStatusQuery)).status).toBe('awaiting_approval');
  });

  test('an audit append retried for the same decision writes one entry', async () => {
    const w = await awaitingReplay();
    const subject = { kind: 'replay' as const, orgId: w.operator.org_id, id: w.id, requestedBy: w.operator.key_id };
    const record = { decision: 'approve' as const, ...as('key_00000000000000000000'), door: 'signal' as const, attempt: 7, at: Date.now() };
    const refusal = { reason: 'unknown_key' as const, message: 'not a key of this workspace' };
    await withAuditLedger(
      t,
      async (audit, heads) => {
        const activities = createApprovalActivities({ keys: new KeysRepo(t.stack.clickhouse), decisionTokens: tokens(), audit, heads, registry: t.stack.registry });
        await activities.auditDecision({ subject, record: { ...record, refusal } });
        await activities.auditDecision({ subject, record: { ...record, refusal } });
      },
      t.stack.registry,
    );
    const entries = (await ledger(w.operator.key)).filter((e) => e.action === 'replay.decision_refused');
    expect(entries).toEqual([objectContaining({ target: w.id, details: objectContaining({ attempt: 7 }) })]);
  });

  /** Decisions refused for want of proof, by door. */
  async function refusedUnproven(via: 'signal' | 'update'): Promise<number> {
    const metric = t.stack.registry.getSingleMetric('nettel_decisions_refused_total');
    const values = metric ? (await metric.get()).values : [];
    return values.filter((v) => v.labels.reason === 'invalid_token' && v.labels.via === via).reduce((sum, v) => sum + v.value, 0);
  }

  /** What someone who reaches Temporal can offer as proof for a real approver's approval, and what the refusal says of it. */
  const unproven: Array<[string, (w: Awaiting) => string | undefined, string]> = [
    ['no token', () => undefined, 'no decision token'],
    ['a forged token (signed with another key)', (w) =>
      new DecisionTokens('f'.repeat(32)).mint({
        orgId: w.operator.org_id, runId: w.id, workflowId: replayWorkflowId(w.operator.org_id, w.id), approverKeyId: w.approver.key_id, approverPerson: as(w.approver.key_id).approverPerson, via: 'api_key', decision: 'approve',
      }, Date.now()), 'not signed for this decision'],
    ['an expired token', (w) => tokenFor(w, w.approver.key_id, 'approve', Date.now() - decisionTokenTtlMs - 1_000), 'expired'],
    ['a token signed for another replay', (w) => tokenFor({ operator: w.operator, id: randomId('rep') }, w.approver.key_id, 'approve'), 'not signed for this decision'],
    ['a token signed for the other decision', (w) => tokenFor(w, w.approver.key_id, 'deny'), 'not signed for this decision'],
  ];

  test.each(unproven)('a raw approve signal naming a real approver key with %s changes nothing and is recorded as refused', async (_name, tokenOf, message) => {
    const w = await awaitingReplay();
    const before = await refusedUnproven('signal');
    const decisionToken = tokenOf(w);
    await w.handle.signal(approveSignal, { ...as(w.approver.key_id), ...(decisionToken ? { decisionToken } : {}) });

    const refused = await waitFor(async () => (await ledger(w.operator.key)).find((e) => e.action === 'replay.decision_refused'), 20_000, 'the refusal');
    expect(refused).toMatchObject({
      actor: w.approver.key_id,
      target: w.id,
      details: { decision: 'approve', via: 'signal', attempt: 1, reason: 'invalid_token', message: stringContaining(message) },
    });
    await waitFor(async () => ((await refusedUnproven('signal')) === before + 1 ? true : undefined), 5_000, 'the refusal counted');
    expect(await w.handle.query(replayStatusQuery)).toMatchObject({ status: 'awaiting_approval', approvals: [] });
    expect((await t.request<ReplayView>('GET', `/v1/replays/${w.id}`, { key: w.operator.key })).body.status).toBe('awaiting_approval');
    expect((await ledger(w.operator.key)).filter((e) => ['replay.approve', 'replay.deny'].includes(e.action))).toEqual([]);
  });

  test.each(unproven)('a raw decide update naming a real approver key with %s fails as refused, is recorded, and changes nothing', async (_name, tokenOf, message) => {
    const w = await awaitingReplay();
    const before = await refusedUnproven('update');
    const decisionToken = tokenOf(w);
    const update = w.handle.executeUpdate(decideUpdate, { args: [{ decision: 'approve', ...as(w.approver.key_id), ...(decisionToken ? { decisionToken } : {}) }] });
    const failure = await update.then(() => undefined, (err: unknown) => err);

    expect(failure).toBeInstanceOf(WorkflowUpdateFailedError);
    expect((failure as WorkflowUpdateFailedError).cause).toMatchObject({ type: decisionFailures.refused, message: stringContaining(message) });
    expect((await ledger(w.operator.key)).filter((e) => e.action.startsWith('replay.') && e.action !== 'replay.request')).toEqual([
      objectContaining({ action: 'replay.decision_refused', actor: w.approver.key_id, details: objectContaining({ via: 'update', reason: 'invalid_token' }) }),
    ]);
    expect(await refusedUnproven('update')).toBe(before + 1);
    expect(await w.handle.query(replayStatusQuery)).toMatchObject({ status: 'awaiting_approval', approvals: [] });
  });

  test('the API door signs a token for the approver it authenticated: the replay completes, and its history carries the token, never the signing key', async () => {
    const w = await awaitingReplay();
    await w.handle.signal(approveSignal, { ...as(w.approver.key_id) });
    await waitFor(async () => (await ledger(w.operator.key)).find((e) => e.action === 'replay.decision_refused'), 20_000, 'the refusal');

    expect((await t.request('POST', `/v1/replays/${w.id}/approve`, { key: w.approver.key, body: { comment: 'via the API' } })).status).toBe(202);
    const done = await replayState(w.operator.key, w.id, 'completed');
    expect(done.approvals).toEqual([objectContaining({ decision: 'approve', approver_key_id: w.approver.key_id, comment: 'via the API' })]);
    const decisions = (await ledger(w.operator.key)).filter((e) => ['replay.approve', 'replay.deny', 'replay.decision_refused'].includes(e.action));
    expect(decisions).toEqual([
      objectContaining({ action: 'replay.approve', actor: w.approver.key_id, details: { comment: 'via the API', via: 'update', attempt: 2 } }),
      objectContaining({ action: 'replay.decision_refused', actor: w.approver.key_id, details: objectContaining({ via: 'signal', attempt: 1, reason: 'invalid_token' }) }),
    ]);
    const history = historyText(await w.handle.fetchHistory());
    expect(history).toMatch(/"decisionToken":"dt2\.\d+\.[A-Za-z0-9_-]{43}"/);
    expect(history).not.toContain(t.stack.config.decisions.signingKey);
    // Neither the token nor the key reaches what the workspace reads.
    expect(JSON.stringify(done)).not.toContain('dt2.');
    expect(JSON.stringify(decisions)).not.toContain('dt2.');
  });

  test('on the embedded default the signing key is generated once into the data folder, readable by its owner only', () => {
    const file = path.join(t.dataDir, 'decision-signing-key');
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    expect(fs.readFileSync(file, 'utf8').trim()).toBe(t.stack.config.decisions.signingKey);
  });
});
