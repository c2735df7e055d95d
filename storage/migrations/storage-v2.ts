import type { ClickHouse } from '../clickhouse';
import { str } from '../sql';
import { destinationRollups, flowsTable, rollupTable, rollupView, sourceRollups, type Rollup } from './flow-tables';
import type { Migration, MigrationContext } from './migration';

/**
 * Storage v2: current ClickHouse takes its own types for flows and their
 * rollups, and every table gains 5-minute and hourly rollups, top sources
 * included. Both steps convert or back-fill what an existing database holds,
 * and are safe to run again after a crash part-way (each table is converted
 * into a fresh copy and swapped in with one EXCHANGE).
 */
async function columnType(ch: ClickHouse, db: string, table: string, column: string): Promise<string | undefined> {
  const rows = await ch.query<{ type: string }>(
    `SELECT type FROM system.columns WHERE database = ${str(db)} AND table = ${str(table)} AND name = ${str(column)}`,
  );
  return rows[0]?.type;
}

/** Rebuilds `table` as `create` describes it, copying its rows through `select`, unless it is converted already. */
async function convert(ch: ClickHouse, ctx: MigrationContext, table: string, create: (name: string) => string, select: string): Promise<void> {
  const next = `${table}_next`;
  await ch.exec(`DROP TABLE IF EXISTS ${ctx.db}.${next}`);
  await ch.exec(create(next));
  await ch.exec(`INSERT INTO ${ctx.db}.${next} ${select} FROM ${ctx.db}.${table}`);
  await ch.exec(`EXCHANGE TABLES ${ctx.db}.${table} AND ${ctx.db}.${next}`);
  await ch.exec(`DROP TABLE ${ctx.db}.${next}`);
}

const flowsToCurrent: Migration = {
  id: '0009_flows_current_types',
  statements: () => [],
  async run(ch, ctx) {
    if (ctx.dialect.generation === 'legacy') return;
    const { db } = ctx;
    const ms = (c: string) => `fromUnixTimestamp64Milli(toInt64(${c}))`;
    // No flow may reach the old rollup while its table is rebuilt: the view goes first and comes back last.
    await ch.exec(`DROP VIEW IF EXISTS ${db}.flows_1m_mv`);
    // A copy left by a run that died between its EXCHANGE and its DROP holds the old rows only.
    for (const table of ['flows', 'flows_1m']) if ((await columnType(ch, db, table, table === 'flows' ? 'ts' : 'minute')) !== 'Int64') await ch.exec(`DROP TABLE IF EXISTS ${db}.${table}_next`);
    if ((await columnType(ch, db, 'flows', 'ts')) === 'Int64') {
      await convert(ch, ctx, 'flows', (name) => flowsTable(ctx, name),
        `SELECT org_id, ${ms('ts')}, ${ms('received_at')}, event_id, toIPv6(src_ip), toIPv6(dst_ip), src_port, dst_port, protocol, bytes, packets`);
    }
    const minute = destinationRollups[0]!;
    if ((await columnType(ch, db, 'flows_1m', 'minute')) === 'Int64') {
      await convert(ch, ctx, 'flows_1m', (name) => rollupTable(ctx, minute, name),
        'SELECT org_id, toDateTime(intDiv(minute, 1000)), toIPv6(dst_ip), protocol, bytes, packets, flows');
    }
    await ch.exec(rollupView(ctx, minute));
  },
};

const coarserRollups = [...destinationRollups.slice(1), ...sourceRollups];

/** Fills a new rollup from what is stored already: the raw flows, or the finer rollup. */
async function backfill(ch: ClickHouse, ctx: MigrationContext, r: Rollup): Promise<void> {
  const { db, dialect: d } = ctx;
  const keys = r.table.startsWith('flows_src_') ? 'src_ip' : 'dst_ip, protocol';
  const fromRaw = r.from === 'flows';
  await ch.exec(`TRUNCATE TABLE ${db}.${r.table}`);
  await ch.exec(
    `INSERT INTO ${db}.${r.table} (org_id, minute, ${keys}, bytes, packets, flows)
     SELECT org_id, bucket, ${keys}, sum(bytes), sum(packets), ${fromRaw ? 'count()' : 'sum(flows)'} FROM (
       SELECT org_id, ${d.bucketOf(fromRaw ? 'ts' : 'minute', r.seconds)} AS bucket, ${keys}, bytes, packets${fromRaw ? '' : ', flows'}
       FROM ${db}.${r.from}) GROUP BY org_id, bucket, ${keys}`,
  );
}

const longRangeRollups: Migration = {
  id: '0010_long_range_rollups',
  // Tables first, views last: a view never feeds a table that does not exist yet.
  statements: (ctx) => [...coarserRollups.map((r) => rollupTable(ctx, r)), ...metricRollupTables(ctx), ...coarserRollups.map((r) => rollupView(ctx, r)), ...metricRollupViews(ctx)],
  async run(ch, ctx) {
    // In cascade order, so each back-fill reads a finer rollup that is already complete.
    for (const r of coarserRollups) await backfill(ch, ctx, r);
    for (const m of metricRollups) {
      await ch.exec(`TRUNCATE TABLE ${ctx.db}.${m.table}`);
      await ch.exec(`INSERT INTO ${ctx.db}.${m.table} ${metricRollupSelect(ctx, m)}`);
    }
  },
};

const metricRollups = [
  { table: 'metrics_5m', ms: 300_000, from: 'metrics_1m' },
  { table: 'metrics_1h', ms: 3_600_000, from: 'metrics_5m' },
];

function metricRollupTables({ db }: MigrationContext): string[] {
  return metricRollups.map(
    (m) => `CREATE TABLE IF NOT EXISTS ${db}.${m.table} (
        org_id String, service String, metric String, minute Int64, total Float64, samples UInt64
      ) ENGINE = SummingMergeTree((total, samples)) PARTITION BY intDiv(minute, 86400000)
        ORDER BY (org_id, service, metric, minute)`,
  );
}

const metricRollupSelect = ({ db }: MigrationContext, m: (typeof metricRollups)[number]) =>
  `SELECT org_id, service, metric, bucket AS minute, total, samples FROM (
     SELECT org_id, service, metric, intDiv(minute, ${m.ms}) * ${m.ms} AS bucket, sum(total) AS total, sum(samples) AS samples
     FROM ${db}.${m.from} GROUP BY org_id, service, metric, bucket)`;

/** As the flow rollups: cascaded on current ClickHouse; on 18.16 (flat views only) fed by the raw metric events. */
function metricRollupViews(ctx: MigrationContext): string[] {
  const { db } = ctx;
  return metricRollups.map((m) => {
    const select =
      ctx.dialect.generation === 'legacy'
        ? `SELECT org_id, service, metric, intDiv(ts, ${m.ms}) * ${m.ms} AS minute, sum(value) AS total, count() AS samples
           FROM ${db}.metrics GROUP BY org_id, service, metric, minute`
        : metricRollupSelect(ctx, m);
    return `CREATE MATERIALIZED VIEW IF NOT EXISTS ${db}.${m.table}_mv TO ${db}.${m.table} AS ${select}`;
  });
}

/** On current ClickHouse, retention of the tables that keep epoch-ms times is a TTL too. */
const rawRetentionByTtl: Migration = {
  id: '0011_retention_by_ttl',
  statements: ({ db, dialect, retention }) =>
    dialect.generation === 'legacy'
      ? []
      : [
          ...['signals', 'metrics'].map((t) => `ALTER TABLE ${db}.${t} MODIFY TTL toDateTime(intDiv(ts, 1000)) + INTERVAL ${retention.raw} DAY`),
          `ALTER TABLE ${db}.metrics_1m MODIFY TTL toDateTime(intDiv(minute, 1000)) + INTERVAL ${retention.minute} DAY`,
          `ALTER TABLE ${db}.metrics_5m MODIFY TTL toDateTime(intDiv(minute, 1000)) + INTERVAL ${retention.fiveMinutes} DAY`,
          `ALTER TABLE ${db}.metrics_1h MODIFY TTL toDateTime(intDiv(minute, 1000)) + INTERVAL ${retention.hour} DAY`,
        ],
};

export const storageV2Migrations: Migration[] = [flowsToCurrent, longRangeRollups, rawRetentionByTtl];
