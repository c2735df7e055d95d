import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { newWriteId } from '../core/ids';
import { createLogger } from '../observability/logger';
import { ChdbClickHouse } from '../storage/chdb-clickhouse';
import { migrate } from '../storage/migrations';
import { addressRollups, dimensionRollups, receiptRollupView, type Rollup } from '../storage/migrations/flow-tables';
import { addressFolded, marksView } from '../storage/migrations/folded-rollups';
import { defaultRollupFoldConfig, RollupFold } from '../storage/rollup-fold';
import type { MigrationContext, Retention } from '../storage/migrations/migration';
import { flowBatches } from './data';
import { stampedBodies } from './storage-scenarios';

/**
 * What each synchronous rollup view costs an insert into `flows` (issue 37,
 * "fewer rollup rows"): the service's schema in one chDB session of this
 * process, scenario 1's rows inserted as the service inserts them
 * (JSONEachRow, a write id each, `rowsPerInsert` a statement), with the views
 * of one shape at a time, the shapes' order rotating each round (a first
 * round warms and is not counted). The figure is the process's CPU time
 * (user + system, chDB's threads included) per flow, which a loaded machine
 * inflates less than it does wall-clock time; read the shapes against each
 * other within one run. With every coarser level folded (migration 0063), the
 * fold's CPU a flow is measured after the inserts and reported beside them.
 * `node dist/bench/rollup-shapes.js [rounds] [flows] [rowsPerInsert] [flowsPerMinute]`.
 */
const day = 86_400_000;
const retention: Retention = { raw: 3650, minute: 3650, fiveMinutes: 3650, hour: 3650 };
/** The hourly dimension rollup as migrations 0049 to 0063 fed it: a view on the raw flows (0063 folds it instead). */
const hourlyDimensionView: Rollup = { table: 'flows_dims_1h', seconds: 3600, from: 'flows', retentionDays: (c) => c.retention.hour };
// Every level a view could feed (since migration 0062 the 5-minute and hourly ones are folded instead: storage/rollup-fold.ts).
const flowRollups = [...addressRollups, hourlyDimensionView];
const every = flowRollups.map((r) => r.table);
const minutes = every.filter((t) => t.endsWith('_1m'));
const folding = 'since migration 0063: the minute levels and the 5-minute marks (every coarser level folded apart)';
const shapes: Record<string, string[]> = {
  'before migration 0062: every view, the 5-minute and hourly cascades included': every,
  'migrations 0062 to 0063: the minute levels, the hourly dimension view and the 5-minute marks': [...minutes, 'flows_dims_1h', 'rollup_marks'],
  [folding]: [...minutes, 'rollup_marks'],
  'no view': [],
};

async function useShape(ch: ChdbClickHouse, ctx: MigrationContext, tables: readonly string[]): Promise<void> {
  for (const t of [...every, 'rollup_marks']) await ch.exec(`DROP VIEW IF EXISTS ${ctx.db}.${t}_mv`);
  for (const r of flowRollups) if (tables.includes(r.table)) await ch.exec(receiptRollupView(ctx, r));
  if (tables.includes('rollup_marks')) await ch.exec(marksView(ctx));
  for (const t of ['flows', 'rollup_marks', 'flows_dims_5m', ...every]) await ch.exec(`TRUNCATE TABLE IF EXISTS ${ctx.db}.${t}`);
}

async function main(): Promise<void> {
  const rounds = Number(process.argv[2] ?? 3);
  const flows = Number(process.argv[3] ?? 200_000);
  const rowsPerInsert = Number(process.argv[4] ?? 5_000);
  // How densely the flows' event times lie: a million a day by default (the seed's density); a live exporter is far denser.
  const flowsPerMinute = Number(process.argv[5] ?? 1_000_000 / 1_440);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rollup-shapes-'));
  const ch = new ChdbClickHouse({ dataDir: dir, database: 'probe' });
  await ch.start();
  try {
    await migrate(ch, { retention, log: createLogger('silent') });
    const ctx: MigrationContext = { db: ch.database, dialect: ch.dialect, retention };
    const now = Date.UTC(2026, 10, 2);
    const bodies = stampedBodies(flowBatches({ flows, batchSize: 5_000, from: now - day, spanMs: Math.round((flows / flowsPerMinute) * 60_000), seed: 1 }), now);
    const statements: string[] = [];
    for (let i = 0; i < bodies.length; i += rowsPerInsert / 5_000) statements.push(bodies.slice(i, i + rowsPerInsert / 5_000).join(''));
    const cpu: Record<string, number[]> = {};
    const names = Object.keys(shapes);
    for (let round = 0; round <= rounds; round++) {
      for (let i = 0; i < names.length; i++) {
        const name = names[(i + round) % names.length]!;
        await useShape(ch, ctx, shapes[name]!);
        const before = process.cpuUsage();
        const started = performance.now();
        for (const s of statements) await ch.insertJsonEachRow('flows', s.replace(/^\{/gm, `{"write_id":${newWriteId()},`));
        const used = process.cpuUsage(before);
        const seconds = (performance.now() - started) / 1000;
        if (round === 0) continue;
        (cpu[name] ??= []).push((used.user + used.system) / flows);
        console.log(`round ${round} ${name}: ${((used.user + used.system) / flows).toFixed(1)} µs CPU a flow, ${Math.round(flows / seconds)} rows/s`);
        if (name === folding) {
          // The address levels first (as since 0062), then the dimension levels of the same buckets, marked pending again.
          (cpu.foldAddress ??= []).push(await foldCpuPerFlow(ch, flows, addressFolded, 'the address levels'));
          await ch.exec(`ALTER TABLE ${ctx.db}.rollup_marks DELETE WHERE kind = 'folded' SETTINGS mutations_sync = 1`);
          (cpu.foldDims ??= []).push(await foldCpuPerFlow(ch, flows, dimensionRollups, 'the dimension levels'));
        }
      }
    }
    console.log(`\nmedians of ${rounds} rounds, ${flows} flows, ${rowsPerInsert} rows a statement, ${Math.round(flowsPerMinute)} flows a minute of event time:\n| views | µs CPU a flow |\n|---|---|`);
    for (const name of names) console.log(`| ${name} | ${median(cpu[name]!).toFixed(1)} |`);
    console.log(`| the fold of the address families' 5-minute and hourly levels from their minutes, after the inserts | ${median(cpu.foldAddress!).toFixed(1)} |`);
    console.log(`| the fold of the dimension levels, 5 minutes from the raw flows and hours from those | ${median(cpu.foldDims!).toFixed(1)} |`);
  } finally {
    await ch.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** The CPU the fold of some levels of every pending bucket takes (storage/rollup-fold.ts), per flow inserted. */
async function foldCpuPerFlow(ch: ChdbClickHouse, flows: number, levels: readonly Rollup[], what: string): Promise<number> {
  const before = process.cpuUsage();
  await new RollupFold(ch, defaultRollupFoldConfig, levels).foldAll({ openToo: true });
  const used = process.cpuUsage(before);
  console.log(`  the fold of ${what}: ${((used.user + used.system) / flows).toFixed(1)} µs CPU a flow`);
  return (used.user + used.system) / flows;
}

function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

main().catch((err: unknown) => {
  process.stderr.write(`rollup-shapes failed: ${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});
