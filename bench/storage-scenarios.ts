import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { HttpClickHouse, type ClickHouse } from '../storage/clickhouse';
import { ChdbClickHouse } from '../storage/chdb-clickhouse';
import { migrate } from '../storage/migrations';
import type { Retention } from '../storage/migrations/migration';
import { str } from '../storage/sql';
import { createLogger } from '../observability/logger';
import { defaultStreamWorkerConfig } from '../workers/telemetry/stream-worker';
import type { FlowBatches } from './data';

/**
 * What the storage costs, beside the end-to-end run: the same rows inserted
 * by a Node process (the baseline the service can at best match), by the
 * engine itself from a local file, and the bytes each stored flow takes.
 * Every database is migrated with the service's own migrate(), so each
 * insert pays for the same schema and the same rollup views.
 */
export interface ClickHouseSettings {
  url?: string;
  user: string;
  password: string;
  retention: Retention;
}

const silent = createLogger('silent');
const round2 = (n: number) => Math.round(n * 100) / 100;

/** The batches' lines as the API stores them: stamped with org, event id and receipt time, `timestamp` as `ts`. */
export function stampedBodies(data: FlowBatches, receivedAt: number): string[] {
  return data.bodies.map(
    (body, b) =>
      body
        .split('\n')
        .map((line, i) => `{"org_id":"org_bench","event_id":"evt_${b.toString(16).padStart(16, '0')}${i.toString(16).padStart(6, '0')}","received_at":${receivedAt},${line.slice(1)}`)
        .map((line) => line.replace('"timestamp":', '"ts":'))
        .join('\n') + '\n',
  );
}

/** A started store on a fresh database of the chDB folder (or the server), with the service's schema. */
async function migrated(ch: ClickHouse, retention: Retention): Promise<ClickHouse> {
  await ch.start();
  await migrate(ch, { retention, log: silent });
  return ch;
}

/**
 * Baseline: the same rows, stamped as the API stamps them, inserted as
 * JSONEachRow from this process in the service's shape: statements of up to
 * the stream workers' batch bytes (WORKER_MAX_BATCH_BYTES' default, 32 MiB),
 * one at a time, as one lane of the stream workers writes them.
 */
export async function rawClickHouse(dir: string, data: FlowBatches, settings: ClickHouseSettings) {
  const database = `bench_raw_${randomBytes(4).toString('hex')}`;
  const ch = await migrated(
    settings.url
      ? new HttpClickHouse({ url: settings.url, user: settings.user, password: settings.password, database })
      : new ChdbClickHouse({ dataDir: path.join(dir, 'raw-chdb'), database }),
    settings.retention,
  );
  const statements = inBatchesOf(stampedBodies(data, Date.now()), defaultStreamWorkerConfig('bench').maxBatchBytes);
  const started = performance.now();
  for (const statement of statements) await ch.insertJsonEachRow('flows', statement);
  const seconds = (performance.now() - started) / 1000;
  await ch.exec(`DROP DATABASE IF EXISTS ${database}`);
  await ch.stop();
  return data.flows / seconds;
}

/** Bodies joined into statements of at most `maxBytes` (a body larger than that is a statement of its own). */
function inBatchesOf(bodies: readonly string[], maxBytes: number): string[] {
  const out: string[] = [];
  let current: string[] = [];
  let bytes = 0;
  for (const body of bodies) {
    if (current.length > 0 && bytes + body.length > maxBytes) {
      out.push(current.join(''));
      current = [];
      bytes = 0;
    }
    current.push(body);
    bytes += body.length;
  }
  if (current.length > 0) out.push(current.join(''));
  return out;
}

/** Times one INSERT … SELECT into a table of `ch`, and checks that every row reached it (and, for flows, the 1-minute rollup). */
async function timedInsert(ch: ClickHouse, table: string, select: string, rows: number): Promise<number> {
  const started = performance.now();
  await ch.exec(`INSERT INTO ${ch.database}.${table} ${select}`);
  const seconds = (performance.now() - started) / 1000;
  const rolled = table === 'flows' ? `(SELECT sum(flows) FROM ${ch.database}.flows_1m)` : String(rows);
  const [stored] = await ch.query<{ flows: string; rolled: string }>(`SELECT (SELECT count() FROM ${ch.database}.${table}) AS flows, ${rolled} AS rolled`);
  if (Number(stored?.flows) !== rows || Number(stored?.rolled) !== rows) {
    throw new Error(`engine insert into ${ch.database}.${table} stored ${stored?.flows} flows and rolled up ${stored?.rolled}, not ${rows}`);
  }
  return rows / seconds;
}

/**
 * The engine's own insert of the same rows, in a chDB session of this
 * process on a fresh folder: `INSERT INTO flows SELECT * FROM file(…,
 * JSONEachRow)` from the stamped lines, then from a Native file ClickHouse
 * wrote from them. chDB resolves a relative file() path against the
 * process's working directory, not a user_files folder: the paths are
 * absolute. Each insert is one statement into its own migrated database.
 */
export async function engineInserts(dir: string, data: FlowBatches, retention: Retention) {
  const folder = path.join(dir, 'engine-chdb');
  const files = path.join(dir, 'engine-files');
  fs.mkdirSync(files, { recursive: true });
  const json = path.join(files, 'flows.jsonl');
  const native = path.join(files, 'flows.native');
  fs.writeFileSync(json, stampedBodies(data, Date.now()).join(''));

  const fromJson = await migrated(new ChdbClickHouse({ dataDir: folder, database: 'engine_json' }), retention);
  const columns = await fromJson.query<{ name: string; type: string }>(
    `SELECT name, type FROM system.columns WHERE database = 'engine_json' AND table = 'flows' ORDER BY position`,
  );
  const structure = columns.map((c) => `${c.name} ${c.type}`).join(', ');
  await fromJson.exec(`INSERT INTO FUNCTION file(${str(native)}, Native) SELECT * FROM file(${str(json)}, JSONEachRow, ${str(structure)}) SETTINGS engine_file_truncate_on_insert = 1`);
  const jsonRowsPerS = await timedInsert(fromJson, 'flows', `SELECT * FROM file(${str(json)}, JSONEachRow, ${str(structure)})`, data.flows);
  await fromJson.stop();

  const fromNative = await migrated(new ChdbClickHouse({ dataDir: folder, database: 'engine_native' }), retention);
  const nativeRowsPerS = await timedInsert(fromNative, 'flows', `SELECT * FROM file(${str(native)}, Native)`, data.flows);
  // What the rollup views cost: the same insert into a table made AS flows, which no view reads.
  await fromNative.exec('CREATE TABLE engine_native.flows_without_views AS engine_native.flows');
  const withoutViewsRowsPerS = await timedInsert(fromNative, 'flows_without_views', `SELECT * FROM file(${str(native)}, Native)`, data.flows);
  const stored = await settledBytesPerFlow(fromNative, 'flows');
  await fromNative.stop();
  return {
    jsoneachrow_rows_per_s: jsonRowsPerS,
    native_rows_per_s: nativeRowsPerS,
    native_without_views_rows_per_s: withoutViewsRowsPerS,
    file_bytes: { jsoneachrow: fs.statSync(json).size, native: fs.statSync(native).size },
    /** The same rows stamped by the bench rather than by the API: a cross-check of bytes_per_flow. */
    stored,
  };
}

/**
 * Bytes on disk per stored row of a table once its parts settle: OPTIMIZE
 * … FINAL merges each partition into one part, then sum(bytes_on_disk) /
 * sum(rows) over the active parts, and each column's compressed bytes per
 * row (what the figure is made of).
 */
export async function settledBytesPerFlow(ch: ClickHouse, table: string) {
  const where = `database = ${str(ch.database)} AND table = ${str(table)} AND active`;
  await ch.exec(`OPTIMIZE TABLE ${ch.database}.${table} FINAL`);
  const [parts] = await ch.query<{ bytes: string; rows: string; parts: string }>(
    `SELECT sum(bytes_on_disk) AS bytes, sum(rows) AS rows, count() AS parts FROM system.parts WHERE ${where}`,
  );
  const rows = Number(parts?.rows ?? 0);
  const columns = await ch.query<{ column: string; bytes: string }>(
    `SELECT column, sum(column_data_compressed_bytes) AS bytes FROM system.parts_columns WHERE ${where} GROUP BY column ORDER BY column`,
  );
  // Compact parts (small tables) keep every column in one file: no size per column.
  const perColumn = columns.some((c) => Number(c.bytes) > 0);
  return {
    bytes_per_flow: rows ? Number(parts?.bytes) / rows : NaN,
    rows,
    parts: Number(parts?.parts ?? 0),
    columns_bytes_per_flow: perColumn ? Object.fromEntries(columns.map((c) => [c.column, round2(Number(c.bytes) / rows)])) : 'compact parts',
  };
}

/**
 * The store of a stopped service (chDB binds its folder to one process at a
 * time: the bench opens it only once the service has stopped), or of a
 * running one on a ClickHouse server.
 */
export function serviceStore(settings: ClickHouseSettings, chdbFolder: string, database: string): ClickHouse {
  return settings.url
    ? new HttpClickHouse({ url: settings.url, user: settings.user, password: settings.password, database })
    : new ChdbClickHouse({ dataDir: chdbFolder, database });
}

/**
 * Bytes per stored flow of the end-to-end run's own rows: the workspace's
 * flows received before `before` are copied into a table made `AS flows`
 * (same columns, codecs, order and partitions), which then settles. Later
 * scenarios' rows (other workspaces, or this one after `before`) stay out.
 */
export async function endToEndBytesPerFlow(store: ClickHouse, orgId: string, before: number) {
  await store.start();
  try {
    const db = store.database;
    await store.exec(`DROP TABLE IF EXISTS ${db}.bench_e2e_flows`);
    await store.exec(`CREATE TABLE ${db}.bench_e2e_flows AS ${db}.flows`);
    await store.exec(
      `INSERT INTO ${db}.bench_e2e_flows SELECT * FROM ${db}.flows WHERE org_id = ${str(orgId)} AND received_at < ${store.dialect.timeLiteral(before)}`,
    );
    const settled = await settledBytesPerFlow(store, 'bench_e2e_flows');
    await store.exec(`DROP TABLE ${db}.bench_e2e_flows`);
    return settled;
  } finally {
    await store.stop();
  }
}
