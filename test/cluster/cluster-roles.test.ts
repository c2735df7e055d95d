import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createLogger } from '../../observability/logger';
import { names } from '../../streams/names';
import { call } from '../support/chaos/scenario';
import { serverQueries } from '../support/chaos/stored-flows';
import { startBgpRouter, type BgpRouter } from '../support/cluster/bgp-router';
import { startClusterService, type ClusterService } from '../support/cluster/cluster-service';
import { bytesDeliveredTo } from '../support/cluster/nats-deliveries';
import type { RoleProcess } from '../support/cluster/role-process';
import { registerApprovedExporter } from '../support/exporters';
import { netflowV5, type V5Record } from '../support/netflow-v5';
import { sendDatagrams } from '../support/udp';
import type { AuditEntryView, AutomationView, IncidentView, Page } from '../support/api-types';
import { waitFor, waitForTelemetryDrained } from '../support/wait';

/**
 * The roles cluster-kills.test.ts does not strike, on the same loopback
 * cluster (deploy/compose.yaml's roles, three NATS nodes): the collector
 * process fed NetFlow v5 datagrams while a stream-worker process is killed
 * with SIGKILL, and two temporal-worker processes on one task queue, each
 * with its automation starter, replay reconciler and mitigation reconciler
 * driving the one BGP speaker, with an active mitigation: the router (BIRD)
 * receives it once and its withdrawal once, the ledger holds one record and
 * the audit one announcement and one withdrawal, when both live to its end
 * and when the one that announced it is killed while it is active; and
 * over both processes the speaker was told once to announce it and once to
 * withdraw it (the one holding the speaker's lease reconciles). A
 * temporal-worker process serves no HTTP, so its
 * nettel_mitigation_reconcile_changes_total is read as the log line the
 * reconciler writes with each count (workers/mitigation/mitigation-reconciler.ts,
 * change()).
 */
const log = createLogger('silent');
let root: string;
let cluster: ClusterService;
let router: BgpRouter;

beforeAll(async () => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), 'nettel-cluster-roles-'));
  router = await startBgpRouter(path.join(root, 'bgp'), log);
  // Info: each speaker change is a log line of the process that made it, read below.
  cluster = await startClusterService(root, log, { 'temporal-worker': { ...router.speakerEnv, LOG_LEVEL: 'info' } }, { 'temporal-worker': 2 });
}, 180_000);

afterAll(async () => {
  await cluster?.stop();
  await router?.stop();
  // CLUSTER_KEEP=1 keeps the processes' logs and the nodes' stores to look into a failure.
  if (!process.env.CLUSTER_KEEP) fs.rmSync(root, { recursive: true, force: true });
});

const url = () => cluster.processes.api[0]!.url!;
const seconds = (since: number) => Number(((Date.now() - since) / 1000).toFixed(1));
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
/** The API as the exporter registration helper calls it. */
const exporterApi = () => ({ adminKey: cluster.adminKey, request: (method: string, route: string, o: { key: string; body?: unknown }) => call(url(), method, route, o.key, o.body) });

/** A workspace of its own for one test: its operator's and its admin's keys. */
async function workspace(): Promise<{ orgId: string; operator: string; admin: string }> {
  const owner = { subject: `cluster-${randomBytes(4).toString('hex')}` };
  const minted = await call<{ key: string; org_id: string }>(url(), 'POST', '/v1/api-keys', cluster.adminKey, { role: 'operator', owner });
  expect(minted.status).toBe(201);
  const admin = await call<{ key: string }>(url(), 'POST', '/v1/api-keys', cluster.adminKey, { role: 'admin', org_id: minted.body.org_id, owner: { subject: 'cluster-admin' } });
  return { orgId: minted.body.org_id, operator: minted.body.key, admin: admin.body.key };
}

/** Counts in ClickHouse: a query's single row of numbers. */
async function counts(sql: string): Promise<Record<string, number>> {
  const [rows] = await serverQueries(process.env.TEST_CLICKHOUSE_URL!)([sql]);
  return Object.fromEntries(Object.entries(rows![0]!).map(([k, v]) => [k, Number(v)]));
}

/**
 * Sends NetFlow v5 from `exporter` until stopped: a datagram of ten records
 * every 20 ms, each record its own flow (source address and port), so a flow
 * stored twice or not at all is told apart from the others.
 */
function exporting(exporter: string) {
  let sent = 0;
  let running = true;
  const done = (async () => {
    for (let d = 0; running; d += 1) {
      const records: V5Record[] = Array.from({ length: 10 }, (_, j) => ({ src: `10.20.${(d >> 8) & 255}.${d & 255}`, dst: '10.30.0.1', bytes: 1500, packets: 1, protocol: 6, srcPort: 10_000 + j, dstPort: 443 }));
      await sendDatagrams(exporter, cluster.netflowPort, [netflowV5(records, { sequence: d })]);
      sent += records.length;
      await sleep(20);
    }
  })();
  return { stop: async () => ((running = false), await done, sent) };
}

test('the collector process\'s flows, sent while a stream-worker process is killed -9 and started again, are each stored once', async () => {
  const { orgId, operator } = await workspace();
  const exporter = '127.0.0.21';
  await registerApprovedExporter(exporterApi(), operator, { address: exporter });
  const flows = `${cluster.database}.flows WHERE org_id = '${orgId}'`;
  // The collector reads the registry every 300 ms: probes (source port 9, not counted below) until one is stored.
  const probe: V5Record = { src: '10.20.255.255', dst: '10.30.0.1', bytes: 40, packets: 1, protocol: 6, srcPort: 9, dstPort: 443 };
  await waitFor(async () => {
    await sendDatagrams(exporter, cluster.netflowPort, [netflowV5([probe])]);
    return (await counts(`SELECT count() AS n FROM ${flows}`)).n! > 0 ? true : undefined;
  }, 30_000, 'the collector to route the exporter');

  const [victim] = cluster.processes['stream-workers'];
  const sender = exporting(exporter);
  await sleep(2_000);
  const killedAt = Date.now();
  await victim!.kill();
  await sleep(3_000);
  await victim!.start();
  const before = await bytesDeliveredTo(victim!.pid, cluster.nats.nodes);
  await waitFor(async () => ((await bytesDeliveredTo(victim!.pid, cluster.nats.nodes)) - before > 64 * 1024 ? true : undefined), 60_000, `${victim!.name} to consume again`);
  const consumingAgain = seconds(killedAt);
  await sleep(2_000);
  const sent = await sender.stop();
  await waitFor(async () => ((await counts(`SELECT count() AS n FROM ${flows} AND src_port >= 10000`)).n! >= sent ? true : undefined), 60_000, `${sent} flows stored`);
  await waitForTelemetryDrained(await cluster.admin.jetstreamManager(), 'nettel', 60_000);
  const stored = await counts(`SELECT count() AS n, uniqExact(event_id) AS ids, uniqExact(src_ip, src_port) AS distinct FROM ${flows} AND src_port >= 10000`);
  process.stdout.write(
    `cluster collector: flows sent ${sent} (NetFlow v5, ${sent / 10} datagrams), stored ${stored.distinct}, lost ${sent - stored.distinct!}, ` +
      `doubled ${stored.n! - stored.distinct!}; ${victim!.name} killed at ${new Date(killedAt).toISOString()}, consuming again ${consumingAgain} s after the kill\n`,
  );
  expect({ stored: stored.n, byEventId: stored.ids, byFlow: stored.distinct }).toEqual({ stored: sent, byEventId: sent, byFlow: sent });
}, 180_000);

/** The speaker changes a temporal-worker process made for `destination`, read from its log (one line each, at info, written where each is counted). */
function speakerChanges(p: RoleProcess, destination: string): { announced: number; withdrawn: number } {
  const lines = fs.existsSync(p.logFile) ? fs.readFileSync(p.logFile, 'utf8').split('\n') : [];
  const of = (change: string) => lines.filter((l) => l.includes('made the BGP speaker match the mitigation ledger') && l.includes(`"change":"${change}"`) && l.includes(destination)).length;
  return { announced: of('announced'), withdrawn: of('withdrawn') };
}

/** A one-minute blackhole of `victim`, decided by a playbook on an incident, active: the run and when its route ends. */
async function activeMitigation(victim: string) {
  const { orgId, operator, admin } = await workspace();
  const prefix = await call<{ id: string }>(url(), 'POST', '/v1/prefixes', admin, { prefix: `${victim.split('.').slice(0, 3).join('.')}.0/24` });
  expect((await call(url(), 'POST', `/v1/prefixes/${prefix.body.id}/approve`, cluster.adminKey)).status).toBe(200);
  const playbook = { id: 'rtbh', name: 'one minute', match: {}, actions: [{ type: 'blackhole', duration_minutes: 1 }] };
  expect((await call(url(), 'PUT', '/v1/playbooks', operator, { playbooks: [playbook] })).status).toBe(200);
  const bird = await router.received();
  await call(url(), 'POST', '/ingest', operator, { telemetry: 'bgp', service: victim, environment: 'prod', region: 'r1', asn: 64500, latency_ms: 40 });
  const incident = await waitFor(async () => (await call<Page<IncidentView>>(url(), 'GET', `/v1/incidents?service=${victim}`, operator)).body.data[0], 30_000, 'the incident');
  const run = await waitFor(async () => {
    const r = (await call<Page<AutomationView>>(url(), 'GET', `/v1/automations?incident_id=${incident.id}`, operator)).body.data[0];
    return r?.status === 'active' ? r : undefined;
  }, 60_000, 'the run active');
  await waitFor(async () => ((await router.holds(`${victim}/32`)) ? true : undefined), 30_000, 'the route in BIRD');
  return { orgId, operator, admin, run, bird, endsAt: Date.parse(run.actions[0]!.ends_at!) };
}

/**
 * After the route's end: BIRD's updates and withdrawals since `bird`, the
 * ledger's records of the workspace, the run's audit entries, and (printed
 * only) each temporal-worker's speaker changes for the route.
 */
async function onceEach(m: Awaited<ReturnType<typeof activeMitigation>>, victim: string) {
  await waitFor(async () => ((await router.holds(`${victim}/32`)) ? undefined : true), 90_000, 'the route gone at its end');
  const lateBy = seconds(m.endsAt);
  await waitFor(async () => ((await call<AutomationView>(url(), 'GET', `/v1/automations/${m.run.automation_id}`, m.operator)).body.status === 'completed' ? true : undefined), 30_000, 'the run completed');
  const now = await router.received();
  const kv = await cluster.admin.jetstream().views.kv(names('nettel').mitigationsBucket);
  const records: Array<{ id: string; ends_at: number; withdrawn_at?: number }> = [];
  for await (const key of await kv.keys(`${m.orgId}.>`)) records.push((await kv.get(key))!.json());
  const audit = (await call<Page<AuditEntryView>>(url(), 'GET', '/v1/audit?limit=100', m.admin)).body.data.filter((e) => e.target === m.run.automation_id);
  const speaker = cluster.processes['temporal-worker'].map((p) => speakerChanges(p, victim));
  return {
    lateBy,
    bird: { updates: now.updates - m.bird.updates, withdrawals: now.withdrawals - m.bird.withdrawals },
    ledger: records.map((r) => ({ id: r.id, withdrawnAtItsEnd: r.withdrawn_at !== undefined && r.withdrawn_at >= r.ends_at })),
    audit: audit.map((e) => e.action).reverse(),
    byProcess: speaker,
  };
}

const once = (id: string) => ({
  bird: { updates: 1, withdrawals: 1 },
  ledger: [{ id, withdrawnAtItsEnd: true }],
  audit: ['automation.executed', 'automation.expired'],
  speakerCalls: { announced: 1, withdrawn: 1 },
});

/** The speaker changes of every temporal-worker process, summed. */
const summed = (byProcess: Array<{ announced: number; withdrawn: number }>) =>
  byProcess.reduce((sum, p) => ({ announced: sum.announced + p.announced, withdrawn: sum.withdrawn + p.withdrawn }), { announced: 0, withdrawn: 0 });

test('two temporal-worker processes on one task queue: BIRD receives an active mitigation once and its withdrawal once at its end, the speaker is told each once, the ledger and the audit hold one of each', async () => {
  const victim = '198.51.101.7';
  const m = await activeMitigation(victim);
  const seen = await onceEach(m, victim);
  process.stdout.write(`cluster two temporal-workers: BIRD received ${JSON.stringify(seen.bird)}; speaker calls by process ${JSON.stringify(seen.byProcess)}; audit ${seen.audit.join(', ')}; withdrawn ${seen.lateBy} s after its end\n`);
  const { bird, ledger, audit, lateBy } = seen;
  expect({ bird, ledger, audit, speakerCalls: summed(seen.byProcess), withdrawnBeforeItsEnd: lateBy < 0 }).toEqual({ ...once(m.run.actions[0]!.id), withdrawnBeforeItsEnd: false });
}, 180_000);

test('kill -9 of the temporal-worker that announced an active mitigation: the route stays in BIRD, the other withdraws it at its end, BIRD and the speaker receive each once', async () => {
  const victim = '198.51.102.7';
  const m = await activeMitigation(victim);
  const workers = cluster.processes['temporal-worker'];
  const announcer = workers.find((p) => speakerChanges(p, victim).announced > 0) ?? workers[0]!;
  const killedAt = Date.now();
  await announcer.kill();
  // BIRD is read every 200 ms from the kill to the route's end: any read without it is a gap.
  let reads = 0;
  let gaps = 0;
  while (Date.now() < m.endsAt - 500) {
    reads += 1;
    if (!(await router.holds(`${victim}/32`))) gaps += 1;
    await sleep(200);
  }
  const seen = await onceEach(m, victim);
  await announcer.start();
  process.stdout.write(
    `cluster temporal-worker ${announcer.name} killed ${((m.endsAt - killedAt) / 1000).toFixed(1)} s before the route's end: BIRD read ${reads} times, ${gaps} without the route; ` +
      `BIRD received ${JSON.stringify(seen.bird)}; speaker calls by process ${JSON.stringify(seen.byProcess)}; audit ${seen.audit.join(', ')}; withdrawn ${seen.lateBy} s after its end\n`,
  );
  const { bird, ledger, audit, lateBy } = seen;
  expect({ bird, ledger, audit, speakerCalls: summed(seen.byProcess), gaps, withdrawnBeforeItsEnd: lateBy < 0 }).toEqual({ ...once(m.run.actions[0]!.id), gaps: 0, withdrawnBeforeItsEnd: false });
}, 180_000);
