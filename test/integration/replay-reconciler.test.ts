import { Client, Connection, WorkflowNotFoundError } from '@temporalio/client';
import { startReplayWorkflow } from '../../application/replay-service';
import { randomId } from '../../core/ids';
import { createLogger } from '../../observability/logger';
import { freePort } from '../../engines/local-process';
import { metricTotal } from '../support/metrics';
import { AuditLedger } from '../../application/audit-ledger';
import { ReplaysRepo, type ReplayRecord } from '../../storage/replays-repo';
import { ReplayReconciler } from '../../workers/governance/replay-reconciler';
import { withAuditLedger } from '../support/audit-ledger';
import { startTestStack, type TestStack } from '../support/test-stack';
import type { AuditEntryView, IncidentView, Page, ReplayView } from '../support/api-types';
import { waitFor } from '../support/wait';
import { replayInStatus } from '../support/replays';

/**
 * A replay stored `queued` whose workflow never started (the API process
 * died before starting it) is started by the reconciler if its request is in
 * the audit ledger, and goes where a requested replay goes; one whose
 * request was never recorded is failed. On the real Temporal dev server and
 * ClickHouse.
 */
const signal = { telemetry: 'bgp', service: 'edge', environment: 'prod', region: 'us-east-1', asn: 64500, latency_ms: 40 };

describe('replay reconciler on the real Temporal dev server', () => {
  let t: TestStack;
  beforeAll(async () => {
    t = await startTestStack('chdb', {
      ROLES: 'api,stream-workers,temporal-worker',
      WORKER_MAX_WAIT_MS: '20',
      REPLAY_RECONCILE_INTERVAL_MS: '500',
      REPLAY_RECONCILE_GRACE_MS: '1000',
    });
  });
  afterAll(async () => {
    await t.stop();
  });

  function stranded(orgId: string, requestedBy: string, incidentId: string): ReplayRecord {
    const now = Date.now();
    return {
      org_id: orgId, replay_id: randomId('rep'), incident_id: incidentId, status: 'queued', requested_by: requestedBy, requested_by_person: null, requested_at: now,
      updated_at: now, window_minutes: 60, approvals: [], report: null, error: null, decision_deadline: null, approval_policies: [], version: 1,
    };
  }

  const withLedger = <T>(work: (ledger: AuditLedger) => Promise<T>) => withAuditLedger(t, work);

  /** What the API does before it starts the workflow: store the replay queued and audit its request. */
  async function storeAndAudit(record: ReplayRecord, ledger: AuditLedger): Promise<void> {
    await new ReplaysRepo(t.stack.clickhouse).put(record);
    await ledger.append({ orgId: record.org_id, actor: record.requested_by, action: 'replay.request', target: record.replay_id, details: { incident_id: record.incident_id } });
  }

  const replayState = (key: string, id: string, status: string) => replayInStatus(t, key, id, status, 60_000);

  test('a replay stranded in queued with its request recorded is started, waits for approval, and completes once approved', async () => {
    const operator = await t.mintKey({ role: 'operator' });
    const approver = await t.mintKey({ role: 'approver', orgId: operator.org_id });
    await t.request('POST', '/ingest', { key: operator.key, body: signal });
    const incident = await waitFor(async () => (await t.request<Page<IncidentView>>('GET', '/v1/incidents', { key: operator.key })).body.data[0]);
    expect((await t.request('POST', '/v1/policies', { key: operator.key, body: { name: 'prod needs a human', requires_approval: true } })).status).toBe(201);

    // The API stored and audited the request, then died before starting the workflow.
    const record = stranded(operator.org_id, operator.key_id, incident.id);
    const replayId = record.replay_id;
    await withLedger((ledger) => storeAndAudit(record, ledger));

    await replayState(operator.key, replayId, 'awaiting_approval');
    expect(await metricTotal(t.stack.registry, 'nettel_replays_reconciled_total')).toBeGreaterThanOrEqual(1);
    expect((await t.request('POST', `/v1/replays/${replayId}/approve`, { key: approver.key })).status).toBe(202);
    const done = await replayState(operator.key, replayId, 'completed');
    expect(done.approvals).toEqual([expect.objectContaining({ decision: 'approve', approver_key_id: approver.key_id })]);

    const ledger = (await t.request<Page<AuditEntryView>>('GET', '/v1/audit', { key: operator.key })).body.data;
    expect(ledger.filter((e) => e.target === replayId).map((e) => ({ action: e.action, actor: e.actor, details: e.details }))).toEqual([
      { action: 'replay.approve', actor: approver.key_id, details: expect.anything() as unknown },
      { action: 'replay.request', actor: operator.key_id, details: { incident_id: incident.id } },
    ]);
    expect((await t.request<{ valid: boolean }>('GET', '/v1/audit/verify', { key: operator.key })).body).toMatchObject({ valid: true });
  });

  test('a replay stranded in queued whose request was never recorded is failed, and no workflow runs', async () => {
    const operator = await t.mintKey({ role: 'operator' });
    // The API stored the replay, then the ledger refused the request (the API answered 503) or the process died.
    const record = stranded(operator.org_id, operator.key_id, 'inc_00000000000000000000');
    await new ReplaysRepo(t.stack.clickhouse).put(record);

    const failed = await replayState(operator.key, record.replay_id, 'failed');
    expect(failed.error).toEqual({ code: 'UNAVAILABLE', message: expect.stringContaining('never recorded') as unknown });
    const workflow = t.stack.temporal.client.workflow.getHandle(`replay:${record.org_id}:${record.replay_id}`);
    await expect(workflow.describe()).rejects.toBeInstanceOf(WorkflowNotFoundError);
    const entries = (await t.request<Page<AuditEntryView>>('GET', '/v1/audit', { key: operator.key })).body.data;
    expect(entries.filter((e) => e.target === record.replay_id)).toEqual([]);
  });

  test('a stranded replay whose workflow cannot start (Temporal unreachable) is failed with the reason once failAfterMs passed', async () => {
    const operator = await t.mintKey({ role: 'operator' });
    const record = stranded(operator.org_id, operator.key_id, 'inc_none');
    const replays = new ReplaysRepo(t.stack.clickhouse);
    // A Temporal address where nothing listens: the start fails with a real connection refusal.
    const unreachable = new Client({ connection: Connection.lazy({ address: `127.0.0.1:${await freePort()}` }) });
    // The reconciler's clock, moved by the test: failAfterMs passes without being waited out.
    let clock = Date.now();
    await withLedger(async (ledger) => {
      const reconciler = new ReplayReconciler(
        { intervalMs: 60_000, graceMs: 1_000, failAfterMs: 500, batchSize: 100 },
        {
          replays,
          start: (input) => unreachable.withDeadline(Date.now() + 2_000, () => startReplayWorkflow(unreachable, t.stack.config.temporal.taskQueue, input)),
          audit: ledger,
          lead: (work) => work(),
          registry: t.stack.registry,
          log: createLogger('silent'),
          now: () => clock,
        },
      );
      // This test leads: the stack's own reconciler finds the lock held and skips its rounds meanwhile.
      await t.stack.adapters.locks.withLock('replay-reconciler', async () => {
        await storeAndAudit({ ...record, requested_at: record.requested_at - 60_000 }, ledger);
        expect((await reconciler.runOnce()).get(record.replay_id)).toBe('start_failed');
        clock += 499;
        expect((await reconciler.runOnce()).get(record.replay_id)).toBe('start_failed');
        clock += 1;
        expect((await reconciler.runOnce()).get(record.replay_id)).toBe('failed');
      });
    });
    const failed = await t.request<ReplayView>('GET', `/v1/replays/${record.replay_id}`, { key: operator.key });
    expect(failed.body).toMatchObject({ status: 'failed', error: { code: 'UNAVAILABLE', message: expect.stringContaining('the workflow could not start') as unknown } });
    await unreachable.connection.close();
  });
});
