import type { ClickHouse } from '../clickhouse';
import { dimensionRollups, keyColumns, receiptRollupView, rollupFromFlows, rollupTable, type Rollup } from './flow-tables';
import type { Migration, MigrationContext } from './migration';

/**
 * The rollups by the analysts' dimensions (flows_dims_1m, _5m, _1h: see
 * flow-tables.ts dimensionRollups and docs/enrichment.md), with receipts
 * from the start, cascaded on current ClickHouse and fed by the raw flows on
 * 18.16 like the other rollups, then back-filled from the flows stored.
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

/** The rollups the back-fill inserts into: on current ClickHouse the 1-minute one, whose views fill the coarser; on 18.16 each. */
const filledDirectly = (ctx: MigrationContext): Rollup[] => (ctx.dialect.generation === 'legacy' ? dimensionRollups : dimensionRollups.slice(0, 1));

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
  for (const r of dimensionRollups) await ch.exec(`TRUNCATE TABLE ${db}.${r.table}`);
  for (const slice of await slices(ch, ctx)) {
    for (const r of filledDirectly(ctx)) {
      const fedByViews = `SELECT write_id FROM ${db}.${r.table} WHERE org_id = '' AND write_id != 0`;
      const source = `(SELECT * FROM ${db}.flows WHERE ${slice} AND write_id NOT IN (${fedByViews}))`;
      await ch.exec(`INSERT INTO ${db}.${r.table} (org_id, minute, ${keyColumns(r).join(', ')}, write_id, bytes, packets, flows) ${rollupFromFlows(ctx, r, source)}`);
    }
  }
}

export const dimensionRollupMigrations: Migration[] = [
  {
    id: '0048_dimension_rollups',
    // Tables first, views last: a view never feeds a table that does not exist yet.
    statements: (ctx) => [...dimensionRollups.map((r) => rollupTable(ctx, r, r.table, true)), ...dimensionRollups.map((r) => receiptRollupView(ctx, r))],
    run: backfill,
  },
];
