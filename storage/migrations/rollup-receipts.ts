import type { ClickHouse } from '../clickhouse';
import { str } from '../sql';
import { addressRollups, keyColumns, receiptRollupView, type Rollup } from './flow-tables';
import type { Migration, MigrationContext } from './migration';

/**
 * Receipts in the flow rollups (storage/rollup-repair.ts): every flow row
 * carries the id of the write that stored it, and every rollup keeps one
 * receipt per write beside its rows. Views are replaced with ones that file
 * the receipts; rows stored before keep write id 0 and get no receipt.
 * Current ClickHouse runs statements (the cluster schema has them too);
 * 18.16, with no `IF NOT EXISTS` on columns, finds what is missing first.
 */
const sortingKey = (r: Rollup) => `(org_id, minute, ${keyColumns(r).join(', ')}, write_id)`;
const writeIdColumn = (ctx: MigrationContext) => `write_id UInt64 ${ctx.dialect.codec('ZSTD(1)')}`;
const dropView = (ctx: MigrationContext, r: Rollup) =>
  ctx.dialect.generation === 'legacy' ? `DROP TABLE IF EXISTS ${ctx.db}.${r.table}_mv` : `DROP VIEW IF EXISTS ${ctx.db}.${r.table}_mv`;

function currentStatements(ctx: MigrationContext): string[] {
  const { db } = ctx;
  return [
    ...addressRollups.map((r) => dropView(ctx, r)),
    `ALTER TABLE ${db}.flows ADD COLUMN IF NOT EXISTS ${writeIdColumn(ctx)}`,
    // Write ids grow with time, so a part's range stays narrow: a repair finds a write's rows without reading the column whole.
    `ALTER TABLE ${db}.flows ADD INDEX IF NOT EXISTS write_id_minmax write_id TYPE minmax GRANULARITY 1`,
    ...addressRollups.map((r) => `ALTER TABLE ${db}.${r.table} ADD COLUMN IF NOT EXISTS ${writeIdColumn(ctx)}, MODIFY ORDER BY ${sortingKey(r)}`),
    ...addressRollups.map((r) => receiptRollupView(ctx, r)),
  ];
}

async function legacyRun(ch: ClickHouse, ctx: MigrationContext): Promise<void> {
  const { db } = ctx;
  const hasWriteId = async (table: string) =>
    (await ch.query<{ n: string }>(`SELECT count() AS n FROM system.columns WHERE database = ${str(db)} AND table = ${str(table)} AND name = 'write_id'`))[0]?.n !== '0';
  for (const r of addressRollups) await ch.exec(dropView(ctx, r));
  if (!(await hasWriteId('flows'))) await ch.exec(`ALTER TABLE ${db}.flows ADD COLUMN ${writeIdColumn(ctx)}`);
  for (const r of addressRollups) {
    if (!(await hasWriteId(r.table))) await ch.exec(`ALTER TABLE ${db}.${r.table} ADD COLUMN ${writeIdColumn(ctx)}, MODIFY ORDER BY ${sortingKey(r)}`);
  }
  for (const r of addressRollups) await ch.exec(receiptRollupView(ctx, r));
}

export const rollupReceiptMigrations: Migration[] = [
  {
    id: '0017_rollup_receipts',
    statements: (ctx) => (ctx.dialect.generation === 'legacy' ? [] : currentStatements(ctx)),
    async run(ch, ctx) {
      if (ctx.dialect.generation === 'legacy') await legacyRun(ch, ctx);
    },
  },
];
