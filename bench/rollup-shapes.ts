import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { newWriteId } from '../core/ids';
import { createLogger } from '../observability/logger';
import { ChdbClickHouse } from '../storage/chdb-clickhouse';
import { migrate } from '../storage/migrations';
import { addressRollups, dimensionRollups, receiptRollupView } from '../storage/migrations/flow-tables';
import { marksView } from '../storage/migrations/folded-rollups';
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
 * other within one run. `node dist/bench/rollup-shapes.js [rounds] [flows] [rowsPerInsert]`.
 */
const day = 86_400_000;
const retention: Retention = { raw: 3650, minute: 3650, fiveMinutes: 3650, hour: 3650 };
// Every level a view could feed (since migration 0062 the 5-minute and hourly ones are folded instead: storage/rollup-fold.ts).
const flowRollups = [...addressRollups, ...dimensionRollups];
const every = flowRollups.map((r) => r.table);
const shapes: Record<string, string[]> = {
  'before migration 0062: every view, the 5-minute and hourly cascades included': every,
  'since migration 0062: the minute levels, the dimension view and the 5-minute marks (the coarse levels folded apart)': [
    ...every.filter((t) => t.endsWith('_1m') || t.startsWith('flows_dims')),
    'rollup_marks',
  ],
  'the minute levels and the dimension view, no marks': every.filter((t) => t.endsWith('_1m') || t.startsWith('flows_dims')),
  'no view': [],
};

async function useShape(ch: ChdbClickHouse, ctx: MigrationContext, tables: readonly string[]): Promise<void> {
  for (const t of [...every, 'rollup_marks']) await ch.exec(`DROP VIEW IF EXISTS ${ctx.db}.${t}_mv`);
  for (const r of flowRollups) if (tables.includes(r.table)) await ch.exec(receiptRollupView(ctx, r));
  if (tables.includes('rollup_marks')) await ch.exec(marksView(ctx));
  for (const t of ['flows', 'rollup_marks', ...every]) await ch.exec(`TRUNCATE TABLE IF EXISTS ${ctx.db}.${t}`);
}

async function main(): Promise<void> {
  const rounds = Number(process.argv[2] ?? 3);
  const flows = Number(process.argv[3] ?? 200_000);
  const rowsPerInsert = Number(process.argv[4] ?? 5_000);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rollup-shapes-'));
  const ch = new ChdbClickHouse({ dataDir: dir, database: 'probe' });
  await ch.start();
  try {
    await migrate(ch, { retention, log: createLogger('silent') });
    const ctx: MigrationContext = { db: ch.database, dialect: ch.dialect, retention };
    const now = Date.UTC(2026, 10, 2);
    const bodies = stampedBodies(flowBatches({ flows, batchSize: 5_000, from: now - day, spanMs: Math.round((flows / 1_000_000) * day), seed: 1 }), now);
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
      }
    }
    console.log(`\nmedians of ${rounds} rounds, ${flows} flows, ${rowsPerInsert} rows a statement:\n| views | µs CPU a flow |\n|---|---|`);
    for (const name of names) console.log(`| ${name} | ${median(cpu[name]!).toFixed(1)} |`);
  } finally {
    await ch.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
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
