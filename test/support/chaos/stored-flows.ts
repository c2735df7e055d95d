import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { HttpClickHouse } from '../../../storage/clickhouse';
import { bytesPerFlow, flowsPerBatch } from './load-client';
import { foldedRollups } from '../../../storage/migrations/folded-rollups';

/** Runs read-only queries on a service's ClickHouse: its server over HTTP, or its chDB folder (the service stopped). */
export type QueryRunner = (queries: string[]) => Promise<Array<Array<Record<string, string>>>>;

export function serverQueries(url: string): QueryRunner {
  return async (queries) => {
    const ch = new HttpClickHouse({ url, user: 'default', password: '', database: 'default' });
    await ch.start();
    try {
      const out = [];
      for (const q of queries) out.push(await ch.query<Record<string, string>>(q));
      return out;
    } finally {
      await ch.stop();
    }
  };
}

/** chDB binds a folder to one process: the queries run in a child process of their own, once the service has stopped. */
export function chdbQueries(dataDir: string, database: string): QueryRunner {
  const script = `
    const { ChdbClickHouse } = require(${JSON.stringify(path.resolve(__dirname, '../../../dist/storage/chdb-clickhouse.js'))});
    (async () => {
      const ch = new ChdbClickHouse({ dataDir: ${JSON.stringify(path.join(dataDir, 'chdb'))}, database: ${JSON.stringify(database)} });
      await ch.start();
      const out = [];
      for (const q of JSON.parse(process.argv[1])) out.push(await ch.query(q));
      await ch.stop();
      process.stdout.write(JSON.stringify(out));
    })().catch((err) => { process.stderr.write(String(err.stack)); process.exit(1); });`;
  return async (queries) => {
    const { stdout } = await promisify(execFile)(process.execPath, ['-e', script, JSON.stringify(queries)], { maxBuffer: 64 * 1024 * 1024 });
    return JSON.parse(stdout) as Array<Array<Record<string, string>>>;
  };
}

const foldedTables = new Set(foldedRollups.map((r) => r.table));

export interface StoredCount {
  /** Rows in the raw table. */
  stored: number;
  /** Acknowledged flows with no row. */
  lost: number;
  /** Rows beyond the first of a flow (a flow is its batch's source and its destination port). */
  doubled: number;
  /** Rollup tables whose flow or byte sum differs from the acknowledged flows (a folded level's: exceeds them). */
  rollupsOff: string[];
}

/**
 * Compares what ClickHouse holds for one workspace with what its client had
 * acknowledged (batches 0..n-1 of `flowsPerBatch` flows): the raw table row
 * by row, every flow rollup by its sums.
 */
export async function countStored(run: QueryRunner, database: string, orgId: string, acknowledgedBatches: number): Promise<StoredCount> {
  const org = `org_id = '${orgId}'`;
  const rollups = (await run([`SELECT name FROM system.tables WHERE database = '${database}' AND name LIKE 'flows\\\\_%' AND engine LIKE '%MergeTree'`]))[0]!.map((r) => r.name!);
  const [raw, perFlow, ...sums] = await run([
    `SELECT count() AS n FROM ${database}.flows WHERE ${org}`,
    `SELECT count() AS distinct_flows, sum(c) AS rows FROM (SELECT src_ip, dst_port, count() AS c FROM ${database}.flows WHERE ${org} GROUP BY src_ip, dst_port)`,
    ...rollups.map((t) => `SELECT sum(flows) AS flows, sum(bytes) AS bytes FROM ${database}.${t} WHERE ${org}`),
  ]);
  const expected = acknowledgedBatches * flowsPerBatch;
  const distinct = Number(perFlow![0]!.distinct_flows);
  // The 5-minute and hourly levels are folded from the minutes a while after their buckets close (storage/rollup-fold.ts;
  // exact once folded: test/integration/rollup-fold.test.ts): here they may lack the recent flows, never hold more.
  const off = (t: string, flows: number, bytes: number) =>
    foldedTables.has(t) ? flows > expected || bytes > expected * bytesPerFlow : flows !== expected || bytes !== expected * bytesPerFlow;
  const rollupsOff = rollups.filter((t, i) => off(t, Number(sums[i]![0]!.flows), Number(sums[i]![0]!.bytes)));
  return { stored: Number(raw![0]!.n), lost: Math.max(0, expected - distinct), doubled: Number(perFlow![0]!.rows) - distinct, rollupsOff };
}
