import { randomBytes, randomUUID } from 'node:crypto';
import path from 'node:path';
import { connect } from 'nats';
import { localClickHouseServer } from '../engines/clickhouse-server';
import { freePort } from '../engines/local-process';
import { createLogger } from '../observability/logger';
import type { Config } from '../service/config';
import { names } from '../streams/names';
import { mintKey, postFlows, storedFlows, waitUntil } from './client';
import type { FlowBatches } from './data';
import { batchedEndToEnd } from './scenarios';
import type { BenchStack, ServiceRun } from './stack';

/** Exactly what one service stored of the flows it acknowledged. */
interface Counted {
  acknowledged: number;
  stored: number;
  distinct_event_ids: number;
  lost: number;
  doubled: number;
}

export interface ClusterResult {
  one_worker_flows_per_s: number;
  two_workers_flows_per_s: number;
  drain_after_kill_flows_per_s: number;
  details: {
    clickhouse: string;
    one_worker: Counted & { flows_per_s: number; accepted_flows_per_s: number };
    two_workers: Counted & { flows_per_s: number; accepted_flows_per_s: number };
    drain_after_kill: Counted & { backlog_flows: number; drain_s: number; ack_wait_ms: number; killed: string };
  };
}

const clients = 4;

/** The rows of a workspace in a ClickHouse server's flows table: how many, and how many distinct flows (event ids). */
async function countedIn(clickhouseUrl: string, database: string, orgId: string, acknowledged: number): Promise<Counted> {
  const sql = `SELECT count() AS n, uniqExact(event_id) AS ids FROM ${database}.flows WHERE org_id = '${orgId}' FORMAT JSONEachRow`;
  const res = await fetch(clickhouseUrl, { method: 'POST', body: sql });
  const text = await res.text();
  if (!res.ok) throw new Error(`count of the stored flows failed: ${text.slice(0, 300)}`);
  const row = JSON.parse(text) as { n: string | number; ids: string | number };
  const stored = Number(row.n);
  const ids = Number(row.ids);
  return { acknowledged, stored, distinct_event_ids: ids, lost: acknowledged - ids, doubled: stored - ids };
}

/** The service's api process and `workers` stream-worker processes, on the ClickHouse server, with a database, folder and NATS prefix of their own. */
function launchSplit(stack: BenchStack, clickhouseUrl: string, workers: number, name: string): Promise<ServiceRun> {
  return stack.launch({
    dataDir: path.join(stack.dir, name),
    database: `${name.replace(/-/g, '_')}_${randomBytes(4).toString('hex')}`,
    natsPrefix: `bench${name.replace(/-/g, '')}${randomBytes(3).toString('hex')}`,
    roles: ['api', ...Array.from({ length: workers }, () => 'stream-workers')],
    // Required of roles that run apart on a ClickHouse server: one value for every process.
    env: { CLICKHOUSE_URL: clickhouseUrl, AUDIT_CHAIN_KEY: randomBytes(32).toString('base64url') },
  });
}

/**
 * Stops a service of the scenario and deletes its streams (its prefix's, KV buckets included).
 * The streams reserve their byte limits in the bench's nats-server's store bound, which the
 * stack's, scenario 11's and the top talkers' services need after these three; the full run of
 * 2026-11-30 failed when the top talkers' service could not reserve its telemetry stream.
 */
async function stopAndForget(stack: BenchStack, service: ServiceRun): Promise<void> {
  await service.stop();
  const nc = await connect({ servers: stack.natsUrl });
  try {
    const jsm = await nc.jetstreamManager();
    const upper = service.natsPrefix.toUpperCase();
    for await (const info of jsm.streams.list()) {
      const name = info.config.name;
      if (name.startsWith(`${upper}_`) || name.startsWith(`KV_${upper}_`)) await jsm.streams.delete(name);
    }
  } finally {
    await nc.close();
  }
}

/** Scenario 1 on a service whose stream workers are `workers` processes of their own; every flow checked stored once. */
async function endToEnd(stack: BenchStack, clickhouseUrl: string, workers: number, data: FlowBatches, range: { from: number; to: number }) {
  const service = await launchSplit(stack, clickhouseUrl, workers, `cluster-${workers}w`);
  try {
    const key = await mintKey(service.url, stack.adminKey);
    const timed = await batchedEndToEnd(service, key.key, data, range);
    return { ...timed, ...(await countedIn(clickhouseUrl, service.database, key.org_id, data.flows)) };
  } finally {
    await stopAndForget(stack, service);
  }
}

/** Messages the writers' consumer has yet to deliver or to see acknowledged. */
async function backlogMessages(natsUrl: string, prefix: string): Promise<number> {
  const nc = await connect({ servers: natsUrl });
  try {
    const n = names(prefix);
    const info = await (await nc.jetstreamManager()).consumers.info(n.stream, n.writers);
    return info.num_pending + info.num_ack_pending;
  } finally {
    await nc.close();
  }
}

/**
 * Two stream-worker processes take scenario 1's bodies (each with an
 * Idempotency-Key); one is killed -9 the moment the last is acknowledged, and
 * the other drains the backlog alone, the dead one's unacknowledged messages
 * included once the ack wait has passed.
 */
async function drainAfterKill(stack: BenchStack, clickhouseUrl: string, data: FlowBatches, range: { from: number; to: number }, ackWaitMs: number) {
  const service = await launchSplit(stack, clickhouseUrl, 2, 'cluster-kill');
  try {
    const key = await mintKey(service.url, stack.adminKey);
    await postFlows(service.url, key.key, data.bodies, clients, () => ({ 'idempotency-key': randomUUID() }));
    const victim = service.processes[service.processes.length - 1]!;
    const killed = performance.now();
    victim.child.kill('SIGKILL');
    await new Promise((resolve) => (victim.child.exitCode !== null || victim.child.signalCode !== null ? resolve(undefined) : victim.child.once('exit', resolve)));
    const backlog = (await backlogMessages(stack.natsUrl, service.natsPrefix)) * (data.flows / data.bodies.length);
    await waitUntil(async () => (await storedFlows(service.url, key.key, range.from, range.to)) >= data.flows, 600_000, 'the backlog drained by the other worker', 20);
    const drainSeconds = (performance.now() - killed) / 1000;
    await waitUntil(async () => (await backlogMessages(stack.natsUrl, service.natsPrefix)) === 0, 60_000, 'the writers consumer empty', 50);
    const counted = await countedIn(clickhouseUrl, service.database, key.org_id, data.flows);
    return { ...counted, backlog_flows: backlog, drain_s: drainSeconds, drain_flows_per_s: backlog / drainSeconds, ack_wait_ms: ackWaitMs, killed: `the process ${victim.child.pid} (ROLES=${victim.role})` };
  } finally {
    await stopAndForget(stack, service);
  }
}

/**
 * Scenario 15 (issue 36): the stream workers as processes of their own, as a
 * deployment runs them, which needs a ClickHouse server (chDB binds its
 * folder to one process): `CLICKHOUSE_URL`'s, or else a clickhouse-server
 * (Debian's 18.16, the one the set-up installs) started here. Scenario 1 on
 * one worker process, then on two, then the drain after one of two is killed
 * -9. Each counts every flow stored once (by event id) or fails the run. On
 * a 2-core machine two workers share the cores with the API, NATS and
 * ClickHouse: the second run shows the workers share the stream without
 * losing or doubling, not that they scale.
 */
export async function clusterScenario(stack: BenchStack, config: Config, data: FlowBatches, range: { from: number; to: number }, log: (msg: string) => void): Promise<ClusterResult> {
  const own = config.clickhouse.url ? undefined : await ownClickHouse(stack.dir, config);
  const clickhouseUrl = config.clickhouse.url ?? own!.url;
  try {
    log(`cluster: ${data.flows} flows end to end through one stream-worker process`);
    const one = await endToEnd(stack, clickhouseUrl, 1, data, range);
    log(`cluster: one worker ${JSON.stringify(one)}; the same through two stream-worker processes`);
    const two = await endToEnd(stack, clickhouseUrl, 2, data, range);
    log(`cluster: two workers ${JSON.stringify(two)}; the same with an Idempotency-Key each, one of two stream-worker processes killed -9 at the last acknowledgement`);
    const drain = await drainAfterKill(stack, clickhouseUrl, data, range, config.nats.ackWaitMs);
    log(`cluster: the drain after a kill ${JSON.stringify(drain)}`);
    for (const [what, c] of [['one worker', one], ['two workers', two], ['the drain after a kill', drain]] as const) {
      if (c.lost !== 0 || c.doubled !== 0 || c.stored !== c.acknowledged) throw new Error(`cluster, ${what}: ${JSON.stringify(c)}: lost or doubled`);
    }
    const { drain_flows_per_s: drainRate, ...drainDetails } = drain;
    return {
      one_worker_flows_per_s: one.flows_per_s,
      two_workers_flows_per_s: two.flows_per_s,
      drain_after_kill_flows_per_s: drainRate,
      details: { clickhouse: own ? `clickhouse-server started by the bench (${own.version})` : 'CLICKHOUSE_URL', one_worker: one, two_workers: two, drain_after_kill: drainDetails },
    };
  } finally {
    await own?.stop();
  }
}

/** A clickhouse-server of the scenario's own, in the bench's folder. */
async function ownClickHouse(dir: string, config: Config) {
  const [port, tcpPort] = await Promise.all([freePort(), freePort()]);
  const server = localClickHouseServer({ dir: path.join(dir, 'cluster-clickhouse'), port, tcpPort, binPath: config.binPath }, createLogger('warn', 'bench'));
  await server.start();
  const url = `http://127.0.0.1:${port}`;
  const version = (await (await fetch(url, { method: 'POST', body: 'SELECT version()' })).text()).trim();
  return { url, version, stop: () => server.stop() };
}
