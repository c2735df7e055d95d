import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { newWriteId } from '../core/ids';
import { createLogger } from '../observability/logger';
import { ChdbClickHouse } from '../storage/chdb-clickhouse';
import { flowStepVolumes, topFlows, type FlowScope } from '../storage/flow-analytics';
import { migrate } from '../storage/migrations';
import { addressRollups, receiptRollupView, rollupTable, type Rollup } from '../storage/migrations/flow-tables';
import type { MigrationContext, Retention } from '../storage/migrations/migration';
import { flowBatches } from './data';
import { seedSelect } from './seed-flows';
import { stampedBodies } from './storage-scenarios';

/**
 * What the dimension rollups' views cost the write path, and what a
 * dimension query costs without the finer levels (issue 33, docs/enrichment.md
 * "Rollups by the analysts' dimensions"). One chDB session in this process;
 * `node dist/bench/rollup-view-cost.js [rounds] [flows]`.
 *
 * Part 1, the insert: the same flows inserted as the service inserts them
 * (JSONEachRow, 5,000 rows a statement, a write id each, the dialect's insert
 * settings) into the service's schema with the dimension family's views in
 * one shape at a time (none, today's cascade, an hourly view on the raw
 * flows, a 5-minute and hourly pair), the shapes' order rotating each round.
 * The process's CPU time (user + system, chDB's threads included) per flow is
 * the figure; wall-clock rows/s beside it. Two kinds of rows: as the batched
 * end-to-end bench sends them (no enrichment, a day of event times for a
 * million flows) and enriched as the 100M-flow seed (bench/seed-flows.ts: its
 * skew, 3.3M flows a day).
 *
 * Part 2, the read: a day of the seed's density (3.3M flows) stored, a top-N
 * by src_as over the day and a series split by src_as at 5-minute steps, read
 * from the dimension rollups and from the raw flows (what the series reads
 * when no 5-minute level exists), through the service's own SQL.
 */
const day = 86_400_000;
const retention: Retention = { raw: 3650, minute: 3650, fiveMinutes: 3650, hour: 3650 };
const orgId = 'org_bench';

interface Shape {
  name: string;
  views: Rollup[];
}
/** A dimension rollup level, whichever the schema holds now (the probe creates the tables a shape needs). */
const level = (seconds: number, from: string): Rollup => ({
  table: `flows_dims_${seconds === 3600 ? '1h' : `${seconds / 60}m`}`, seconds, from, retentionDays: (c) => c.retention.hour,
});
const levels = ['flows_dims_1m', 'flows_dims_5m', 'flows_dims_1h'];
const shapes: Shape[] = [
  { name: 'none', views: [] },
  { name: 'cascade 1m>5m>1h (a)', views: [level(60, 'flows'), level(300, 'flows_dims_1m'), level(3600, 'flows_dims_5m')] },
  { name: '1h from raw (b)', views: [level(3600, 'flows')] },
  { name: '5m + 1h from raw (c)', views: [level(300, 'flows'), level(3600, 'flows')] },
];

async function useShape(ch: ChdbClickHouse, ctx: MigrationContext, shape: Shape): Promise<void> {
  for (const table of levels) await ch.exec(`DROP VIEW IF EXISTS ${ctx.db}.${table}_mv`);
  for (const r of shape.views) await ch.exec(rollupTable(ctx, r, r.table, true));
  for (const r of shape.views) await ch.exec(receiptRollupView(ctx, r));
}

async function emptyTables(ch: ChdbClickHouse): Promise<void> {
  for (const t of ['flows', ...addressRollups.map((r) => r.table), ...levels]) await ch.exec(`TRUNCATE TABLE IF EXISTS ${ch.database}.${t}`);
}

/** The enriched rows of the seed, `count` of them at its density, as JSONEachRow bodies of 5,000. */
async function enrichedBodies(ch: ChdbClickHouse, count: number): Promise<string[]> {
  const from = Date.UTC(2026, 10, 1);
  const plan = { flows: count, orgId, from, to: from + Math.round((count / 3_300_000) * day) };
  const rows = await ch.query<Record<string, unknown>>(seedSelect(plan, 0, count));
  const lines = rows.map((r) => JSON.stringify({ ...r, bytes: Number(r.bytes), packets: Number(r.packets) }));
  const bodies: string[] = [];
  for (let i = 0; i < lines.length; i += 5_000) bodies.push(lines.slice(i, i + 5_000).join('\n') + '\n');
  return bodies;
}

async function insertAll(ch: ChdbClickHouse, bodies: readonly string[]): Promise<{ cpuUs: number; seconds: number }> {
  const cpu = process.cpuUsage();
  const started = performance.now();
  for (const body of bodies) await ch.insertJsonEachRow('flows', body.replace(/^\{/gm, `{"write_id":${newWriteId()},`));
  const used = process.cpuUsage(cpu);
  return { cpuUs: used.user + used.system, seconds: (performance.now() - started) / 1000 };
}

async function check(ch: ChdbClickHouse, shape: Shape, flows: number): Promise<void> {
  for (const r of shape.views) {
    const [row] = await ch.query<{ n: string; receipts: string }>(
      `SELECT sumIf(flows, org_id != '') AS n, sumIf(flows, org_id = '') AS receipts FROM ${ch.database}.${r.table}`,
    );
    if (Number(row?.n) !== flows || Number(row?.receipts) !== flows) throw new Error(`${r.table} holds ${row?.n} flows and receipts for ${row?.receipts}, not ${flows}`);
  }
}

/** The middle value (the mean of the middle two of an even count). */
function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

async function insertCost(ch: ChdbClickHouse, ctx: MigrationContext, rounds: number, flows: number) {
  const now = Date.UTC(2026, 10, 2);
  const empty = stampedBodies(flowBatches({ flows, batchSize: 5_000, from: now - day, spanMs: Math.round((flows / 1_000_000) * day), seed: 1 }), now);
  const enriched = await enrichedBodies(ch, flows);
  const kinds = { empty, enriched };
  const results: Record<string, Record<string, { cpu: number[]; rate: number[] }>> = {};
  // A first pass, not counted: the engine's caches and the process's code warm.
  for (const bodies of Object.values(kinds)) {
    await emptyTables(ch);
    await insertAll(ch, bodies);
  }
  for (let round = 0; round < rounds; round++) {
    for (let i = 0; i < shapes.length; i++) {
      const shape = shapes[(i + round) % shapes.length]!;
      await useShape(ch, ctx, shape);
      for (const [kind, bodies] of Object.entries(kinds)) {
        await emptyTables(ch);
        const { cpuUs, seconds } = await insertAll(ch, bodies);
        await check(ch, shape, flows);
        const cell = ((results[shape.name] ??= {})[kind] ??= { cpu: [], rate: [] });
        cell.cpu.push(cpuUs / flows);
        cell.rate.push(flows / seconds);
        console.log(`round ${round + 1} ${shape.name} ${kind}: ${(cpuUs / flows).toFixed(1)} µs CPU/flow, ${Math.round(flows / seconds)} rows/s`);
      }
    }
  }
  console.log(`\nmedians of ${rounds} rounds of ${flows} flows (µs CPU per flow, rows/s):`);
  console.log('| shape | empty µs/flow | empty rows/s | enriched µs/flow | enriched rows/s |\n|---|---|---|---|---|');
  for (const shape of shapes) {
    const r = results[shape.name]!;
    console.log(`| ${shape.name} | ${median(r.empty!.cpu).toFixed(1)} | ${Math.round(median(r.empty!.rate))} | ${median(r.enriched!.cpu).toFixed(1)} | ${Math.round(median(r.enriched!.rate))} |`);
  }
}

async function timed<T>(fn: () => Promise<T>, runs: number): Promise<{ ms: number; spread: string; answer: T }> {
  let answer = await fn();
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const started = performance.now();
    answer = await fn();
    times.push(performance.now() - started);
  }
  return { ms: median(times), spread: `${Math.round(Math.min(...times))}-${Math.round(Math.max(...times))}`, answer };
}

/** A series split by src_as at 5-minute steps from the 5-minute dimension rollup (shape c), as flowStepVolumes would read it. */
async function fiveMinuteSeries(ch: ChdbClickHouse, range: { from: number; to: number }, texts: readonly string[]) {
  const d = ch.dialect;
  const list = `(${texts.map((t) => `'${t}'`).join(', ')})`;
  return ch.query(
    `SELECT toInt64(intDiv(${d.bucketMs('minute')}, 300000) * 300000) AS t, if(toString(src_as) IN ${list}, toString(src_as), '') AS key,
       sum(bytes) AS bytes, sum(packets) AS packets, sum(flows) AS flows
     FROM ${ch.database}.flows_dims_5m WHERE org_id = '${orgId}' AND minute >= ${d.bucketLiteral(range.from)} AND minute < ${d.bucketLiteral(range.to)}
     GROUP BY t, key ORDER BY t`,
  );
}

async function readCost(ch: ChdbClickHouse, ctx: MigrationContext, runs: number) {
  await useShape(ch, ctx, shapes[3]!);
  await emptyTables(ch);
  const from = Date.UTC(2026, 10, 10);
  const perDay = 3_300_000;
  const plan = { flows: perDay, orgId, from, to: from + day - 1 };
  for (let start = 0; start < perDay; start += 500_000) {
    await ch.exec(`INSERT INTO ${ch.database}.flows (org_id, ts, received_at, event_id, src_ip, dst_ip, src_port, dst_port, protocol, bytes, packets, exporter, in_if, out_if, src_as, dst_as, src_country, dst_country, dst_net_name) ${seedSelect(plan, start, Math.min(500_000, perDay - start))}`);
  }
  await ch.exec(`OPTIMIZE TABLE ${ch.database}.flows_dims_5m FINAL`);
  await ch.exec(`OPTIMIZE TABLE ${ch.database}.flows_dims_1h FINAL`);
  const wholeDay = { from, to: from + day };
  // The last hour as the console asks it: not whole hours, so the hourly rollup holds none of it.
  const anHour = { from: from + 10 * 3_600_000 + 17 * 60_000, to: from + 11 * 3_600_000 + 17 * 60_000 };
  const scope = (source: 'dims' | 'raw', range = wholeDay): FlowScope => ({ orgId, range, filters: [], plan: source === 'raw' ? { source, because: [] } : { source } });
  const line = (what: string, t: { ms: number; spread: string }) => console.log(`| ${what} | ${Math.round(t.ms)} | ${t.spread} |`);
  console.log(`\na day of ${perDay} flows (the 100M seed's density), medians of ${runs} runs:\n| query | ms | min-max |\n|---|---|---|`);
  const top = await timed(() => topFlows(ch, scope('dims'), ['src_as'], 'bytes', 10), runs);
  line(`top-N by src_as, a day, ${top.answer.segments.map((x) => x.resolution).join('+')}`, top);
  line('top-N by src_as, a day, raw', await timed(() => topFlows(ch, scope('raw'), ['src_as'], 'bytes', 10), runs));
  line('top-N by src_as, an unaligned hour, raw', await timed(() => topFlows(ch, scope('raw', anHour), ['src_as'], 'bytes', 10), runs));
  const texts = top.answer.rows.slice(0, 5).map((r) => r.text[0]!);
  line('series split by src_as, 5-minute steps, a day, flows_dims_5m', await timed(() => fiveMinuteSeries(ch, wholeDay, texts), runs));
  line('series split by src_as, 5-minute steps, a day, raw', await timed(() => flowStepVolumes(ch, scope('raw'), 300_000, { dimension: 'src_as', texts }), runs));
  line('series split by src_as, hourly steps, a day, flows_dims_1h', await timed(() => flowStepVolumes(ch, scope('dims'), 3_600_000, { dimension: 'src_as', texts }), runs));
}

async function main(): Promise<void> {
  const rounds = Number(process.argv[2] ?? 4);
  const flows = Number(process.argv[3] ?? 200_000);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rollup-view-cost-'));
  const ch = new ChdbClickHouse({ dataDir: dir, database: 'probe' });
  await ch.start();
  try {
    await migrate(ch, { retention, log: createLogger('silent') });
    const ctx: MigrationContext = { db: ch.database, dialect: ch.dialect, retention };
    if (process.env.PROBE_PART !== 'read') await insertCost(ch, ctx, rounds, flows);
    if (process.env.PROBE_PART !== 'insert') await readCost(ch, ctx, 5);
  } finally {
    await ch.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
