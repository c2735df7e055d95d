import type { ClickHouse } from '../clickhouse';
import { RollupRepair } from '../rollup-repair';
import { dimensionRollups, keyColumns, receiptRollupView, rollupFromFlows, rollupTable, viewFedRollups, type Rollup } from './flow-tables';
import { dropView } from './folded-rollups';
import type { Migration, MigrationContext } from './migration';

/**
 * Migration 0048: the rollups by the analysts' dimensions (flows_dims_1m,
 * _5m, _1h, as rollupsOf0048 lists them; docs/enrichment.md), with receipts
 * from the start, cascaded on current ClickHouse and fed by the raw flows on
 * 18.16 like the other rollups, then back-filled from the flows stored.
 * Migration 0049 (below) keeps the hourly one only.
 *
 * The back-fill empties the tables first, so a run cut short is run again
 * whole. It runs while writes may go on: a write the views fed since the
 * tables were emptied has its receipt there and is left out; every other
 * write is aggregated from the stored flows with its receipt, as a repair
 * does (storage/rollup-repair.ts). It goes one day at a time, so no single
 * aggregation holds more than a day of flows: flows stored before receipts
 * (write id 0) by the day of their time, the others by the day of their
 * write (a write id starts with its time in milliseconds, core/ids.ts), so
 * each write's rows and receipt land in one step.
 */
const day = 86_400_000;

/** The rollups migration 0048 created, as it created them (0049 keeps the hourly one only, 0063 folds it: see flow-tables.ts dimensionRollups). */
const rollupsOf0048: Rollup[] = [
  { table: 'flows_dims_1m', seconds: 60, from: 'flows', retentionDays: (c) => c.retention.minute },
  { table: 'flows_dims_5m', seconds: 300, from: 'flows_dims_1m', retentionDays: (c) => c.retention.fiveMinutes },
  { table: 'flows_dims_1h', seconds: 3600, from: 'flows_dims_5m', retentionDays: (c) => c.retention.hour },
];

/** The rollups the back-fill inserts into: on current ClickHouse the 1-minute one, whose views fill the coarser; on 18.16 each. */
const filledDirectly = (ctx: MigrationContext): Rollup[] => (ctx.dialect.generation === 'legacy' ? rollupsOf0048 : rollupsOf0048.slice(0, 1));

async function days(ch: ClickHouse, sql: string): Promise<number[]> {
  return (await ch.query<{ day: string }>(sql)).map((r) => Number(r.day)).sort((a, b) => a - b);
}

/** One day's slices of the stored flows: flows without a write id by their time, written ones by their write's. */
async function slices(ch: ClickHouse, ctx: MigrationContext): Promise<string[]> {
  const { db, dialect: d } = ctx;
  const unwritten = await days(ch, `SELECT DISTINCT toString(intDiv(${d.msOf('ts')}, ${day})) AS day FROM ${db}.flows WHERE write_id = 0`);
  const written = await days(ch, `SELECT DISTINCT toString(intDiv(bitShiftRight(write_id, 20), ${day})) AS day FROM ${db}.flows WHERE write_id != 0`);
  const writeId = (ms: number) => (BigInt(ms) << 20n).toString();
  return [
    ...unwritten.map((n) => `write_id = 0 AND ts >= ${d.timeLiteral(n * day)} AND ts < ${d.timeLiteral((n + 1) * day)}`),
    ...written.map((n) => `write_id >= ${writeId(n * day)} AND write_id < ${writeId((n + 1) * day)}`),
  ];
}

async function backfill(ch: ClickHouse, ctx: MigrationContext): Promise<void> {
  const { db } = ctx;
  for (const r of rollupsOf0048) await ch.exec(`TRUNCATE TABLE ${db}.${r.table}`);
  for (const slice of await slices(ch, ctx)) {
    for (const r of filledDirectly(ctx)) {
      const fedByViews = `SELECT write_id FROM ${db}.${r.table} WHERE org_id = '' AND write_id != 0`;
      const source = `(SELECT * FROM ${db}.flows WHERE ${slice} AND write_id NOT IN (${fedByViews}))`;
      await ch.exec(`INSERT INTO ${db}.${r.table} (org_id, minute, ${keyColumns(r).join(', ')}, write_id, bytes, packets, flows) ${rollupFromFlows(ctx, r, source)}`);
    }
  }
}

/**
 * Migration 0049: the hourly dimension rollup fed by the raw flows, the
 * minute and 5-minute ones dropped, the 5-minute table kept without its view
 * for migration 0063 (measured in docs/enrichment.md: their views cost the
 * insert more than they saved the reads). The hourly table
 * keeps its rows; on current ClickHouse only its view changes, from the
 * cascade to the raw flows (18.16 fed it from them already). A write whose
 * flows were inserted while the views were being swapped may have missed
 * the hourly rollup: the recent writes are completed from their receipts,
 * as a repair does (storage/rollup-repair.ts), once the new view is in.
 */
/** What migration 0049 kept: the hourly rollup, fed by the raw flows through a view (until migration 0063 folds it). */
const keptBy0049: Rollup[] = [{ table: 'flows_dims_1h', seconds: 3600, from: 'flows', retentionDays: (c) => c.retention.hour }];
const dropped = rollupsOf0048.filter((r) => !keptBy0049.some((kept) => kept.table === r.table));
/**
 * The tables 0049 drops: the minute one. The 5-minute table stays (its view goes) for migration 0063 to fold: dropped
 * here and created again there, it would be created outside a cluster's Replicated DDL by a replica migrating from the
 * start (deploy/clickhouse/cluster.sql).
 */
const droppedTables = ['flows_dims_1m'];
const recentMs = 15 * 60_000;

function hourlyFromRaw(ctx: MigrationContext): string[] {
  const { db } = ctx;
  const views = ctx.dialect.generation === 'legacy' ? dropped : rollupsOf0048;
  return [
    ...views.map((r) => dropView(ctx, r)),
    ...keptBy0049.map((r) => receiptRollupView(ctx, r)),
    ...droppedTables.map((table) => `DROP TABLE IF EXISTS ${db}.${table}`),
  ];
}

async function completeRecentWrites(ch: ClickHouse, ctx: MigrationContext): Promise<void> {
  const since = (BigInt(Date.now() - recentMs) << 20n).toString();
  const rows = await ch.query<{ w: string }>(`SELECT DISTINCT toString(write_id) AS w FROM ${ctx.db}.flows WHERE write_id >= ${since}`);
  // The marks the folded levels go by come with migration 0062, which marks recent writes itself.
  await new RollupRepair(ch, undefined, { marks: false, rollups: [...viewFedRollups, ...keptBy0049] }).complete(rows.map((r) => r.w));
}

/**
 * Migration 0063: the dimension rollups folded from closed buckets, like the
 * address rollups' coarse levels since 0062 (storage/rollup-fold.ts; issue
 * 37: the hourly view cost each insert of flows about a third of its CPU).
 * A 5-minute level is folded from the raw flows, the hourly one from it. The
 * hourly table keeps its rows; its view goes. Every insert of flows marks
 * its buckets pending already (0062), so a write has its hourly rows from
 * the view or its marks. The 5-minute level is filled from the stored flows,
 * a day at a time: the hourly fold adds what the 5-minute level holds beyond
 * the hour's rows, so it must hold every stored flow of an hour it folds. A
 * write stored while the fill runs is marked, and the fold adds only what a
 * level lacks, so it is counted once either way. A run cut short starts over
 * from an empty table.
 */
async function fillFiveMinutes(ch: ClickHouse, ctx: MigrationContext): Promise<void> {
  const { db, dialect: d } = ctx;
  const [fiveMinutes] = dimensionRollups;
  const keys = keyColumns(fiveMinutes!).join(', ');
  await ch.exec(`TRUNCATE TABLE ${db}.${fiveMinutes!.table}`);
  for (const n of await days(ch, `SELECT DISTINCT toString(intDiv(${d.msOf('ts')}, ${day})) AS day FROM ${db}.flows`)) {
    await ch.exec(
      `INSERT INTO ${db}.${fiveMinutes!.table} (org_id, minute, ${keys}, write_id, bytes, packets, flows)
       SELECT org_id, ${d.bucketOf('ts', fiveMinutes!.seconds)} AS bucket, ${keys}, toUInt64(0), sum(bytes), sum(packets), count()
       FROM ${db}.flows WHERE ts >= ${d.timeLiteral(n * day)} AND ts < ${d.timeLiteral((n + 1) * day)} GROUP BY org_id, bucket, ${keys}
       SETTINGS insert_deduplicate = 0`,
    );
  }
}

export const dimensionRollupMigrations: Migration[] = [
  {
    id: '0048_dimension_rollups',
    // Tables first, views last: a view never feeds a table that does not exist yet.
    statements: (ctx) => [...rollupsOf0048.map((r) => rollupTable(ctx, r, r.table, true)), ...rollupsOf0048.map((r) => receiptRollupView(ctx, r))],
    run: backfill,
  },
  { id: '0049_dimension_rollup_hourly', statements: hourlyFromRaw, run: completeRecentWrites },
];

/** After 0062, whose marks the folded dimension rollups go by. */
export const foldedDimensionRollupMigrations: Migration[] = [
  {
    id: '0063_folded_dimension_rollups',
    statements: (ctx) => [rollupTable(ctx, dimensionRollups[0]!, dimensionRollups[0]!.table, true), dropView(ctx, dimensionRollups[1]!)],
    run: fillFiveMinutes,
  },
];
