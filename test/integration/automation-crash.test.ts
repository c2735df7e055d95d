import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { localGobgpServer } from '../../engines/gobgp';
import { freePort, type LocalProcess } from '../../engines/local-process';
import { EngineSupervisor } from '../../engines/supervisor';
import { createLogger } from '../../observability/logger';
import { createRegistry } from '../../observability/metrics';
import { loadConfig } from '../../service/config';
import type { AutomationView, IncidentView, Page } from '../support/api-types';
import { birdc, birdSocket, localBird } from '../../bench/bird';
import { startTestStack, type TestStack } from '../support/test-stack';
import { waitFor } from '../support/wait';
import { startWorkerProcess } from '../support/worker-process';

/**
 * The ledger outlives whoever wrote it: the temporal-worker role (the
 * automation runs, the starter and the mitigation reconciler) runs as its own
 * process and is killed -9 while a mitigation is active, then gobgpd is killed
 * -9 too. The restarted process's reconciler gives the new gobgpd the route
 * again, and the route still leaves BIRD at the end of its minute.
 */
const log = createLogger(process.env.TEST_LOGS ? 'info' : 'silent');
const config = loadConfig(process.env);
const asn = 65001;
const victim = '198.51.100.7';

describe('an active mitigation across kill -9 of the service and of the speaker', () => {
  let dir: string;
  let gobgpd: LocalProcess;
  let supervisor: EngineSupervisor;
  let bird: LocalProcess;
  let t: TestStack;
  let workerEnv: Record<string, string>;
  const master4 = () => birdc(birdSocket(path.join(dir, 'bird')), config.binPath, ['show', 'route', 'table', 'master4', 'all']);
  const routeIs = (present: boolean, what: string, timeoutMs = 30_000) =>
    waitFor(async () => ((await master4()).includes(`${victim}/32`) === present ? true : undefined), timeoutMs, what);

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'automation-crash-'));
    const [bgpPort, apiPort, birdPort] = await Promise.all([freePort(), freePort(), freePort()]);
    gobgpd = localGobgpServer({ dir: path.join(dir, 'gobgpd'), bgpPort, apiPort, asn, routerId: '127.0.0.1', binPath: config.binPath, toolsDir: config.toolsDir }, log);
    supervisor = new EngineSupervisor(gobgpd, { checkIntervalMs: 100, backoffMs: 100, maxBackoffMs: 1_000, livenessFailAfterMs: 60_000 }, { log, registry: createRegistry() });
    bird = localBird({ dir: path.join(dir, 'bird'), binPath: config.binPath, address: '127.0.0.2', port: birdPort, asn, speaker: { address: '127.0.0.1', port: bgpPort, asn }, discardNextHop: '192.0.2.1' }, log);
    await Promise.all([supervisor.start(), bird.start()]);
    // The api and the stream workers in this process; the temporal-worker role in the child, sharing the secrets it needs.
    t = await startTestStack('clickhouse-server', { ROLES: 'api,stream-workers' });
    workerEnv = {
      ROLES: 'temporal-worker',
      BGP_SPEAKER_ADDRESS: `127.0.0.1:${apiPort}`,
      BGP_NEIGHBORS: `127.0.0.2:${birdPort}@${asn}`,
      DECISION_SIGNING_KEY: t.stack.config.decisions.signingKey!,
      AUDIT_CHAIN_KEY: t.stack.config.audit.chainKey!,
      TEMPORAL_TASK_QUEUE: t.stack.config.temporal.taskQueue,
    };
  }, 120_000);

  afterAll(async () => {
    await t?.stop();
    await Promise.all([supervisor?.stop(), bird?.stop()]);
    fs.rmSync(dir, { recursive: true, force: true });
  });

  test('the route comes back after both are killed, and leaves BIRD at its end', async () => {
    const admin = await t.mintKey({ role: 'admin' });
    const operator = await t.mintKey({ role: 'operator', orgId: admin.org_id });
    const prefix = await t.request<{ id: string }>('POST', '/v1/prefixes', { key: admin.key, body: { prefix: '198.51.100.0/24' } });
    expect((await t.request('POST', `/v1/prefixes/${prefix.body.id}/approve`, { key: t.adminKey })).status).toBe(200);
    const playbook = { id: 'rtbh', name: 'one minute', match: {}, actions: [{ type: 'blackhole', duration_minutes: 1 }] };
    expect((await t.request('PUT', '/v1/playbooks', { key: operator.key, body: { playbooks: [playbook] } })).status).toBe(200);

    let worker = startWorkerProcess(t.stack.config, path.join(dir, 'worker'), workerEnv, path.join(dir, 'worker.log'));
    try {
      await t.request('POST', '/ingest', { key: operator.key, body: { telemetry: 'bgp', service: victim, environment: 'prod', region: 'r1', asn: 64500, latency_ms: 40 } });
      const incident = await waitFor(async () => (await t.request<Page<IncidentView>>('GET', `/v1/incidents?service=${victim}`, { key: operator.key })).body.data[0], 30_000, 'the incident');
      const run = await waitFor(async () => {
        const r = (await t.request<Page<AutomationView>>('GET', `/v1/automations?incident_id=${incident.id}`, { key: operator.key })).body.data[0];
        return r?.status === 'active' ? r : undefined;
      }, 60_000, 'the run active');
      const endsAt = Date.parse(run.actions[0]!.ends_at!);
      await routeIs(true, 'the route in BIRD');

      worker.child.kill('SIGKILL');
      await worker.exited;
      worker = startWorkerProcess(t.stack.config, path.join(dir, 'worker'), workerEnv, path.join(dir, 'worker.log'));
      gobgpd.kill();
      await routeIs(false, 'BIRD dropping the route with the session');
      await routeIs(true, 'the route back, from the restarted reconciler');
      expect(Date.now()).toBeLessThan(endsAt);

      await routeIs(false, 'the route gone at its end', 90_000);
      // Not before its end; how soon after is the bench's to say (automation_withdraw_lag_p99_ms).
      expect(Date.now()).toBeGreaterThanOrEqual(endsAt);
      await waitFor(async () => ((await t.request<AutomationView>('GET', `/v1/automations/${run.automation_id}`, { key: operator.key })).body.status === 'completed' ? true : undefined), 30_000, 'the run completed by the restarted worker');
    } finally {
      worker.child.kill('SIGKILL');
      await worker.exited;
    }
  }, 240_000);
});
