import type { ClickHouse } from '../clickhouse';
import { destinationRollups, dimensionRollups, sourceRollups, type Rollup } from './flow-tables';
import type { Migration, MigrationContext } from './migration';

/**
 * Migration 0062: the 5-minute and hourly flow rollups are folded from the
 * minute level instead of fed by views on every insert (issue 37; design in
 * storage/rollup-fold.ts and docs/internals/rollups.md). Each insert of
 * flows now marks the 5-minute buckets it touched as pending, through a
 * small view; the fold brings each pending bucket's coarse rows to the
 * minute level's sums, and the analysts' planner reads a pending bucket from
 * the minutes. The coarse tables keep their rows and their old receipts.
 *
 * Order matters while older processes may still write: the marks' view goes
 * in before the coarse views go out, so a write has its coarse rows from a
 * view or its marks (or both: the fold adds only what the coarse level
 * lacks). Writes of the last 15 minutes are marked as well, for a write
 * whose views ran while the swap happened.
 */
/** The address families' folded levels (migration 0062). */
export const addressFolded: Rollup[] = [...destinationRollups.slice(1), ...sourceRollups.slice(1)];
/** Every folded level, finer before coarser: by destination and by source (migration 0062), by dimension (0063). */
export const foldedRollups: Rollup[] = [...addressFolded, ...dimensionRollups];
const recentMs = 15 * 60_000;
/** The bucket of the marks: the 5-minute level's (an hour is pending while any of its 5-minute buckets is). */
export const markSeconds = 300;

export function marksTable({ db, dialect: d, retention }: MigrationContext): string {
  return `CREATE TABLE IF NOT EXISTS ${db}.rollup_marks (
        org_id ${d.labelType}, bucket ${d.bucketType}, kind String, at ${d.bucketType}
      ) ENGINE = ReplacingMergeTree(at) PARTITION BY ${d.bucketDayOf('bucket')} ORDER BY (org_id, bucket, kind) ${d.ttl('bucket', retention.minute)}`;
}

/** The view that marks every 5-minute bucket an insert of flows touches, at the server's time. */
export function marksView({ db, dialect: d }: MigrationContext): string {
  return `CREATE MATERIALIZED VIEW IF NOT EXISTS ${db}.rollup_marks_mv TO ${db}.rollup_marks AS
        SELECT org_id, ${d.bucketOf('ts', markSeconds)} AS bucket, 'pending' AS kind, ${d.nowTime} AS at FROM ${db}.flows GROUP BY org_id, bucket`;
}

/** 18.16 knows no DROP VIEW: a view is dropped as a table there. */
export const dropView = (ctx: MigrationContext, r: Rollup) => `DROP ${ctx.dialect.generation === 'legacy' ? 'TABLE' : 'VIEW'} IF EXISTS ${ctx.db}.${r.table}_mv`;

async function markRecentWrites(ch: ClickHouse, ctx: MigrationContext): Promise<void> {
  const { db, dialect: d } = ctx;
  const since = (BigInt(Date.now() - recentMs) << 20n).toString();
  await ch.exec(
    `INSERT INTO ${db}.rollup_marks (org_id, bucket, kind, at)
     SELECT org_id, ${d.bucketOf('ts', markSeconds)} AS bucket, 'pending' AS kind, ${d.nowTime} AS at FROM ${db}.flows WHERE write_id >= ${since} GROUP BY org_id, bucket`,
  );
}

export const foldedRollupMigrations: Migration[] = [
  {
    id: '0062_folded_rollups',
    statements: (ctx) => [marksTable(ctx), marksView(ctx), ...addressFolded.map((r) => dropView(ctx, r))],
    run: markRecentWrites,
  },
];
