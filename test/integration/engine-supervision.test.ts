import { freePort } from '../../engines/local-process';
import type { HealthView, Page, PolicyView, ReplayRequested, ReplayView } from '../support/api-types';
import { enginePidIn, type EmbeddedEngine } from '../support/chaos/service-process';
import { startTestStack, type TestStack } from '../support/test-stack';
import { waitFor, waitForTelemetryDrained } from '../support/wait';

/**
 * The embedded default's own engines (a nats-server and a Temporal dev server
 * this stack starts, not the shared test engines), each killed with SIGKILL:
 * the supervisor starts it again on its store, /healthz says `degraded`
 * meanwhile, and what was acknowledged or waiting before the kill goes on.
 */
const flow = { src_ip: '192.0.2.1', dst_ip: '192.0.2.2', bytes: 10, packets: 1, protocol: 'udp' };

const enginePid = (t: TestStack, engine: EmbeddedEngine) => enginePidIn(t.dataDir, engine);

async function restartsOf(t: TestStack, engine: string): Promise<number> {
  const metric = t.stack.registry.getSingleMetric('nettel_engine_restarts_total');
  const values = metric ? (await metric.get()).values : [];
  return values.find((v) => v.labels.engine === engine)?.value ?? 0;
}

async function healthOf(t: TestStack): Promise<HealthView> {
  return (await t.request<HealthView>('GET', '/healthz')).body;
}

describe('supervised local engines', () => {
  let t: TestStack;
  let operator: { key: string; org_id: string };
  let approver: { key: string };
  beforeAll(async () => {
    const [nats, temporal, ui] = await Promise.all([freePort(), freePort(), freePort()]);
    t = await startTestStack('chdb', {
      ROLES: 'api,stream-workers,temporal-worker',
      NATS_URL: '',
      TEMPORAL_ADDRESS: '',
      EMBEDDED_NATS_PORT: String(nats),
      EMBEDDED_TEMPORAL_PORT: String(temporal),
      EMBEDDED_TEMPORAL_UI_PORT: String(ui),
      ENGINE_CHECK_INTERVAL_MS: '200',
      ENGINE_RESTART_BACKOFF_MS: '200',
      WORKER_MAX_WAIT_MS: '50',
    });
    operator = await t.mintKey({ role: 'operator' });
    approver = await t.mintKey({ role: 'approver', orgId: operator.org_id });
  }, 180_000);
  afterAll(async () => {
    await t?.stop();
  });

  test('a killed nats-server is restarted on its store: healthz degrades then recovers, and ingestion resumes', async () => {
    expect((await t.request('POST', '/flow', { key: operator.key, body: flow })).status).toBe(201);
    process.kill(enginePid(t, 'nats'), 'SIGKILL');
    await waitFor(async () => ((await healthOf(t)).status === 'degraded' ? true : undefined), 10_000, 'healthz degraded');
    await waitFor(async () => ((await healthOf(t)).status === 'ok' ? true : undefined), 30_000, 'healthz ok again');
    expect(await restartsOf(t, 'nats-server')).toBe(1);
    const after = await waitFor(async () => {
      const res = await t.request('POST', '/flow', { key: operator.key, body: { ...flow, bytes: 20 } });
      return res.status === 201 ? res : undefined;
    }, 15_000, 'ingestion to resume');
    expect(after.status).toBe(201);
    await waitForTelemetryDrained(t.stack.nats.jsm, t.stack.config.nats.prefix);
    const rows = await t.stack.clickhouse.query<{ b: string }>(`SELECT sum(bytes) AS b FROM ${t.stack.clickhouse.database}.flows`);
    expect(Number(rows[0]!.b)).toBe(30);
  });

  async function waitingReplay(timeoutMinutes: number): Promise<ReplayView> {
    const incident = { telemetry: 'bgp', service: `svc-${timeoutMinutes}`, environment: 'prod', region: 'eu', latency_ms: 5 };
    expect((await t.request('POST', '/ingest', { key: operator.key, body: incident })).status).toBe(202);
    const found = await waitFor(async () => {
      const res = await t.request<Page<{ id: string }>>('GET', `/v1/incidents?service=svc-${timeoutMinutes}`, { key: operator.key });
      return res.body.data[0];
    }, 20_000, 'the incident');
    const id = (await t.request<ReplayRequested>('POST', '/v1/replay', { key: operator.key, body: { incident_id: found.id } })).body.replay_id;
    return replayIn(id, 'awaiting_approval', 30_000);
  }

  const replayIn = (id: string, status: string, timeoutMs: number) =>
    waitFor(async () => {
      const res = await t.request<ReplayView>('GET', `/v1/replays/${id}`, { key: operator.key });
      return res.body.status === status ? res.body : undefined;
    }, timeoutMs, `replay ${status}`);

  test('a replay waiting for approval survives a killed Temporal dev server, and its approval timeout still holds', async () => {
    await t.request<PolicyView>('POST', '/v1/policies', { key: operator.key, body: { name: 'gate', requires_approval: true, approval_timeout_minutes: 60 } });
    const approved = (await waitingReplay(60)).replay_id;
    await t.request<PolicyView>('POST', '/v1/policies', { key: operator.key, body: { name: 'quick gate', requires_approval: true, approval_timeout_minutes: 0.5 } });
    const expiring = await waitingReplay(0.5);
    // Ten of its thirty seconds gone before the kill: a timer started again from zero would expire ten seconds late.
    const deadline = Date.parse(expiring.decision_deadline!);
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, deadline - 20_000 - Date.now())));
    const killed = enginePid(t, 'temporal');
    process.kill(killed, 'SIGKILL');
    await waitFor(async () => ((await restartsOf(t, 'temporal')) === 1 && enginePid(t, 'temporal') !== killed ? true : undefined), 30_000, 'the restart');
    await waitFor(async () => ((await healthOf(t)).status === 'ok' ? true : undefined), 90_000, 'healthz ok again');
    const decided = await waitFor(async () => {
      const res = await t.request('POST', `/v1/replays/${approved}/approve`, { key: approver.key, body: { comment: 'after the restart' } });
      return res.status === 202 ? res : undefined;
    }, 60_000, 'the approval to be taken');
    expect(decided.status).toBe(202);
    expect((await replayIn(approved, 'completed', 60_000)).report).toMatchObject({ parity: true });
    const expired = await replayIn(expiring.replay_id, 'expired', 90_000);
    expect(expired.error).toMatchObject({ code: 'APPROVAL_EXPIRED' });
    // The timer kept its deadline through the restart: it did not start again from zero.
    const lateByMs = Date.parse(expired.updated_at) - Date.parse(expired.decision_deadline!);
    expect(lateByMs).toBeGreaterThanOrEqual(0);
    expect(lateByMs).toBeLessThan(8_000);
  });
});
