import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createLogger } from '../../observability/logger';
import { defaultsOf } from '../../core/settings';
import { clickhouseSettings } from '../../storage/clickhouse.config';
import { clusterDdl } from '../../storage/cluster-ddl';
import { HttpClickHouse } from '../../storage/clickhouse';
import { dialectOf } from '../../storage/dialect';
import { migrate } from '../../storage/migrations';
import { LoadClient, flowsPerBatch, type LoadReport } from '../support/chaos/load-client';
import { whileAcknowledging } from '../support/chaos/scenario';
import { countStored, serverQueries, type StoredCount } from '../support/chaos/stored-flows';
import { runStatements, startReplicatedClickHouse, statementsOf, type ClickHouseReplica, type RefusedStatement, type ReplicatedClickHouse } from '../support/clickhouse-replicas';
import { metricTotal } from '../support/metrics';
import { startTestStack, type TestStack } from '../support/test-stack';
import { waitFor, waitForTelemetryDrained } from '../support/wait';

/**
 * ClickHouse replication on loopback: one shard of two clickhouse-server
 * replicas (Debian's 18.16) coordinated by Debian's ZooKeeper. First the
 * cluster DDL deploy/ ships, as it is, and what 18.16 makes of it; then the
 * same DDL written for 18.16 and the service's own migrations on top; then
 * the service (pointed, as an operator points it, at replica A) under a
 * client that retries as a collector does, while one replica at a time is
 * killed with SIGKILL and started again. Each time every acknowledged flow
 * ends up stored exactly once on both replicas.
 */
const log = createLogger('silent');
const deployDdl = path.resolve(__dirname, '../../deploy/clickhouse/cluster.sql');
let root: string;
let engines: ReplicatedClickHouse;
/** The service, on replica A, once the schema test has started it; and the database of that schema. */
let service: TestStack | undefined;
let database: string;

beforeAll(async () => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), 'nettel-replication-'));
  engines = await startReplicatedClickHouse(root, log);
}, 120_000);

afterAll(async () => {
  await service?.stop();
  await engines?.stop();
  // REPLICATION_KEEP=1 keeps the servers' logs and stores to look into a failure.
  if (!process.env.REPLICATION_KEEP) fs.rmSync(root, { recursive: true, force: true });
});

const replicaA = () => engines.replicas[0];
const replicaB = () => engines.replicas[1];
const seconds = (since: number) => Number(((Date.now() - since) / 1000).toFixed(1));

/** The tables of a database on one replica, by name, with their engine and columns. */
async function tablesOn(replica: ClickHouseReplica, db: string): Promise<Record<string, { engine: string; columns: string }>> {
  const [rows] = await serverQueries(replica.url)([
    `SELECT t.name AS name, t.engine AS engine, c.columns AS columns FROM system.tables AS t
     LEFT JOIN (SELECT table, arrayStringConcat(groupArray(concat(name, ' ', type)), ', ') AS columns FROM system.columns WHERE database = '${db}' GROUP BY table) AS c ON c.table = t.name
     WHERE t.database = '${db}'`,
  ]);
  return Object.fromEntries(rows!.map((r) => [r.name!, { engine: r.engine!, columns: r.columns ?? '' }]));
}

function printRefusals(title: string, refused: readonly RefusedStatement[], total: number): void {
  const lines = refused.map((r) => `  ${r.statement.slice(0, 100)}\n    -> ${r.error.slice(0, 300)}`);
  process.stdout.write(`${title}: ${total - refused.length} of ${total} statements ran, ${refused.length} refused by 18.16\n${lines.join('\n')}\n`);
}

/** A refusal for a table that does not exist (60) and that no statement made: a view over a table a refused statement should have made. */
const refusedForATableNeverMade = (r: RefusedStatement, made: Record<string, unknown>) => {
  const table = r.code === 60 ? /Table nettel\.(\w+) doesn't exist/.exec(r.error)?.[1] : undefined;
  return table !== undefined && !(table in made);
};

test("deploy/clickhouse/cluster.sql on 18.16: it refuses only the newer syntax (code 62) and what depends on it (code 60); each table it accepts is Replicated on both replicas", async () => {
  const statements = statementsOf(fs.readFileSync(deployDdl, 'utf8'));
  const refused = await runStatements(replicaA().url, statements);
  printRefusals('deploy/clickhouse/cluster.sql', refused, statements.length);
  const [a, b] = await Promise.all([tablesOn(replicaA(), 'nettel'), tablesOn(replicaB(), 'nettel')]);
  const unexpected = refused.filter((r) => r.code !== 62 && !refusedForATableNeverMade(r, a));
  expect(unexpected).toEqual([]);
  expect(Object.keys(b).sort()).toEqual(Object.keys(a).sort());
  const notReplicated = Object.entries(a).filter(([, t]) => t.engine !== 'MaterializedView' && !t.engine.startsWith('Replicated'));
  expect(notReplicated).toEqual([]);
  // The raw flows are among what 18.16 cannot hold from this file (DateTime64, IPv6, LowCardinality, codecs).
  expect(a.flows).toBeUndefined();
}, 240_000);

/** The service's own migrations (storage/migrations.ts) against one replica, as a process pointed at it runs them at its start. */
async function migrateOn(replica: ClickHouseReplica): Promise<string[]> {
  const ch = new HttpClickHouse({ url: replica.url, user: 'default', password: '', database });
  await ch.start();
  try {
    return await migrate(ch, { retention: defaultsOf(clickhouseSettings).clickhouse.retention, log });
  } finally {
    await ch.stop();
  }
}

test("the cluster DDL in 18.16's dialect, then the service's migrations on each replica: the same tables and views on both, every table Replicated", async () => {
  database = `repl_${randomBytes(4).toString('hex')}`;
  const { clickhouse } = defaultsOf(clickhouseSettings);
  const statements = statementsOf(clusterDdl({ db: database, dialect: dialectOf('18.16'), retention: clickhouse.retention }));
  const refused = await runStatements(replicaA().url, statements);
  printRefusals(`cluster DDL for 18.16 (${database})`, refused, statements.length);
  // The service on replica A migrates at its start; replica B is migrated as a process pointed at it would.
  const startedAt = Date.now();
  service = await startTestStack('clickhouse-server', { CLICKHOUSE_URL: replicaA().url, CLICKHOUSE_DATABASE: database, WORKER_MAX_WAIT_MS: '50' });
  process.stdout.write(`the service migrated ${database} on replica A and started in ${seconds(startedAt)} s\n`);
  const onB = await migrateOn(replicaB());
  process.stdout.write(`the service's migrations on replica B: ${onB.length} applied\n`);
  const [a, b] = await Promise.all([tablesOn(replicaA(), database), tablesOn(replicaB(), database)]);
  expect(b).toEqual(a);
  // The service's record of applied migrations is each replica's own (each replica is migrated once).
  const notReplicated = Object.entries(a).filter(([name, t]) => name !== 'schema_migrations' && t.engine !== 'MaterializedView' && !t.engine.startsWith('Replicated'));
  expect(notReplicated).toEqual([]);
  expect(a.flows?.engine).toBe('ReplicatedMergeTree');
}, 240_000);

interface Stored {
  stored: StoredCount;
  byEventId: { lost: number; doubled: number };
}

/** What one replica holds for a workspace against what the client had acknowledged: row by row, by event id, and the rollups' sums. */
async function storedOn(replica: ClickHouseReplica, orgId: string, report: LoadReport): Promise<Stored> {
  const run = serverQueries(replica.url);
  const stored = await countStored(run, database, orgId, report.acknowledgedBatches);
  const [rows] = await run([`SELECT count() AS n, uniqExact(event_id) AS ids FROM ${database}.flows WHERE org_id = '${orgId}'`]);
  const { n, ids } = rows![0]!;
  return { stored, byEventId: { lost: report.acknowledgedFlows - Number(ids), doubled: Number(n) - Number(ids) } };
}

/** Waits until a replica has fetched every part the other wrote: each replicated table's queue empty (SYSTEM SYNC REPLICA). */
async function caughtUp(replica: ClickHouseReplica): Promise<void> {
  const [tables] = await serverQueries(replica.url)([`SELECT name FROM system.tables WHERE database = '${database}' AND engine LIKE 'Replicated%'`]);
  const refused = await runStatements(replica.url, tables!.map((t) => `SYSTEM SYNC REPLICA ${database}.${t.name}`));
  if (refused.length > 0) throw new Error(`replica ${replica.name} did not catch up: ${refused.map((r) => r.error).join('; ')}`);
}

/**
 * The restarted replica has taken its place again in every replicated table:
 * its `is_active` node in ZooKeeper was made after `since` (by its new
 * session). Until then the node of the killed process's session stands (for
 * the session's 4 s), then none, until the replica's restarting thread tries
 * again: inserts are taken all along, but the replica is not active.
 */
async function rejoined(replica: ClickHouseReplica, since: number): Promise<void> {
  const run = serverQueries(replica.url);
  await waitFor(async () => {
    const [replicas] = await run([`SELECT replica_path FROM system.replicas WHERE database = '${database}'`]);
    const nodes = await run(replicas!.map((r) => `SELECT toUInt64(ctime) AS created FROM system.zookeeper WHERE path = '${r.replica_path}' AND name = 'is_active'`));
    const activeAgain = nodes.filter((rows) => rows.length === 1 && Number(rows[0]!.created) >= Math.floor(since / 1000));
    return replicas!.length > 0 && activeAgain.length === replicas!.length ? true : undefined;
  }, 60_000, `replica ${replica.name} to be active again in every table`);
}

/** Rows of a workspace's raw flows on one replica. */
async function rowsOn(replica: ClickHouseReplica, orgId: string): Promise<number> {
  const [rows] = await serverQueries(replica.url)([`SELECT count() AS n FROM ${database}.flows WHERE org_id = '${orgId}'`]);
  return Number(rows![0]!.n);
}

interface KillOutcome {
  report: LoadReport;
  a: Stored;
  b: Stored;
}

/**
 * One kill under load: the load runs, `victim` is killed, then it stays down
 * until five more batches are acknowledged (more than the two senders had in
 * flight, so at least one was posted after the kill) and the wait `onKill`
 * gave (called at the kill) has seen the service act on the outage, and
 * returned that figure; then it starts again and
 * rejoins, five more, then the stream drains and both replicas catch up.
 */
async function killReplicaUnderLoad(victim: ClickHouseReplica, orgId: string, key: string, onKill: () => Promise<() => Promise<Record<string, string>>>): Promise<KillOutcome> {
  const t = service!;
  const client = new LoadClient({ url: () => t.url, key, scenario: `replica-${victim.name}-${randomBytes(3).toString('hex')}`, senders: 2, timestamp: Date.now() });
  try {
    client.start();
    await whileAcknowledging(client, 5);
    const killedAt = Date.now();
    await victim.kill();
    const whileDown = await onKill();
    const acknowledgedAtKill = client.acknowledged;
    await whileAcknowledging(client, 5);
    const trafficAgain = seconds(killedAt);
    const downFigures = await whileDown();
    const acknowledgedWhileDown = client.acknowledged - acknowledgedAtKill;
    const restartedAt = Date.now();
    await victim.start();
    const restart = seconds(restartedAt);
    await rejoined(victim, restartedAt);
    const rejoin = seconds(restartedAt);
    await whileAcknowledging(client, 5);
    const report = await client.stop();
    const stoppedAt = Date.now();
    await waitForTelemetryDrained(t.stack.nats.jsm, t.stack.config.nats.prefix, 120_000);
    const drain = seconds(stoppedAt);
    // The 5-minute and hourly levels are folded from the minutes (storage/rollup-fold.ts): the load's buckets are still open.
    await t.stack.rollupFolder!.settle({ openToo: true });
    await Promise.all(engines.replicas.map(caughtUp));
    const [a, b] = await Promise.all([storedOn(replicaA(), orgId, report), storedOn(replicaB(), orgId, report)]);
    const retries = Object.values(report.retries).reduce((x, y) => x + y, 0);
    const figures: Record<string, string> = {
      'killed at': new Date(killedAt).toISOString(),
      'five more batches acknowledged after': `${trafficAgain} s`,
      'batches acknowledged while it was down': String(acknowledgedWhileDown),
      ...downFigures,
      'restart took': `${restart} s`,
      'active again in every table after the restart': `${rejoin} s`,
      'the stream drained after the load stopped': `${drain} s`,
    };
    process.stdout.write(
      `replication kill of replica ${victim.name}: flows acknowledged ${report.acknowledgedFlows} (${report.acknowledgedBatches + retries} posts of ${flowsPerBatch}); ` +
        `replica a stored ${a.stored.stored} (lost ${a.byEventId.lost}, doubled ${a.byEventId.doubled}), replica b stored ${b.stored.stored} (lost ${b.byEventId.lost}, doubled ${b.byEventId.doubled}); ` +
        `${Object.entries(figures).map(([k, v]) => `${k} ${v}`).join(', ')} (retries ${JSON.stringify(report.retries)})\n`,
    );
    return { report, a, b };
  } finally {
    client.abort();
  }
}

/** A workspace of its own for one kill, and its operator's key. */
async function workspace(): Promise<{ orgId: string; key: string }> {
  const minted = await service!.mintKey({ role: 'operator', owner: { subject: `replication-${randomBytes(4).toString('hex')}` } });
  return { orgId: minted.org_id, key: minted.key };
}

function expectExactlyOnceOnBoth(o: { report: LoadReport; a: Stored; b: Stored }): void {
  const once: Stored = { stored: { stored: o.report.acknowledgedFlows, lost: 0, doubled: 0, rollupsOff: [] }, byEventId: { lost: 0, doubled: 0 } };
  expect({ a: o.a, b: o.b, unexpectedAnswers: o.report.unexpected }).toEqual({ a: once, b: once, unexpectedAnswers: [] });
}

test('kill -9 of replica B, which the service does not write to: clients see nothing, the service writes on to A, and once B rejoins every acknowledged flow is stored once on both replicas', async () => {
  const { orgId, key } = await workspace();
  const outcome = await killReplicaUnderLoad(replicaB(), orgId, key, async () => {
    const rowsAtKill = await rowsOn(replicaA(), orgId);
    // Down until A has taken rows B has not seen: B must fetch them when it rejoins.
    return async () => {
      const written = await waitFor(async () => {
        const rows = await rowsOn(replicaA(), orgId);
        return rows > rowsAtKill ? rows - rowsAtKill : undefined;
      }, 60_000, 'replica A to take rows while B is down');
      return { 'flows written to A while B was down': String(written) };
    };
  });
  expectExactlyOnceOnBoth(outcome);
  expect(outcome.report.retries).toEqual({});
}, 240_000);

test('kill -9 of replica A, which the service writes to: the API accepts on, the writes fail and are retried, and once A is back every acknowledged flow is stored once on both replicas', async () => {
  const { orgId, key } = await workspace();
  const registry = service!.stack.registry;
  const failures = () => metricTotal(registry, 'nettel_worker_write_failures_total');
  const outcome = await killReplicaUnderLoad(replicaA(), orgId, key, async () => {
    const failuresAtKill = await failures();
    // Down until the stream workers have failed to write to it: what they hold then waits for A.
    return async () => {
      const failed = await waitFor(async () => ((await failures()) > failuresAtKill ? (await failures()) - failuresAtKill : undefined), 60_000, 'a write to replica A to fail');
      return { 'messages whose write failed while A was down': String(failed) };
    };
  });
  expectExactlyOnceOnBoth(outcome);
  // Accepted into JetStream all along: the API does not wait on ClickHouse to take telemetry.
  expect(outcome.report.retries).toEqual({});
}, 240_000);
