import type { Logger } from '../observability/logger';
import type { ClickHouse } from './clickhouse';
import { platformMigrations } from './migrations/platform';
import { governanceMigrations } from './migrations/governance';
import type { Migration, MigrationContext } from './migrations/migration';
import { telemetryMigrations } from './migrations/telemetry';

/** Schema as ordered, idempotent migrations; the same DDL runs on chDB and on clickhouse-server 18.16. */
export const migrations: Migration[] = [...platformMigrations, ...telemetryMigrations, ...governanceMigrations];

export async function migrate(ch: ClickHouse, opts: { retentionDays: number; log: Logger }): Promise<string[]> {
  const version = await ch.version();
  const major = Number(version.split('.')[0]);
  const ctx: MigrationContext = { db: ch.database, legacy: major < 19, retentionDays: opts.retentionDays };
  await ch.exec(
    `CREATE TABLE IF NOT EXISTS ${ctx.db}.schema_migrations (id String, applied_at Int64) ENGINE = MergeTree ORDER BY id`,
  );
  const applied = new Set((await ch.query<{ id: string }>(`SELECT id FROM ${ctx.db}.schema_migrations`)).map((r) => r.id));
  const newlyApplied: string[] = [];
  for (const migration of migrations) {
    if (applied.has(migration.id)) continue;
    for (const statement of migration.statements(ctx)) await ch.exec(statement);
    await ch.insertJsonEachRow('schema_migrations', JSON.stringify({ id: migration.id, applied_at: Date.now() }) + '\n');
    newlyApplied.push(migration.id);
    opts.log.info({ migration: migration.id, clickhouse: version }, 'migration applied');
  }
  return newlyApplied;
}
