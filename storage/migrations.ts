import type { Logger } from '../observability/logger';
import type { ClickHouse } from './clickhouse';
import type { Dialect } from './dialect';
import { attackWindowMigrations } from './migrations/attack-windows';
import { automationMigrations } from './migrations/automations';
import { detectionRulesMigrations } from './migrations/detection-rules';
import { dimensionRollupMigrations, foldedDimensionRollupMigrations } from './migrations/dimension-rollups';
import { enrichmentMigrations as interfaceEnrichmentMigrations } from './enrichment/migrations';
import { enrichmentMigrations as addressEnrichmentMigrations } from './migrations/enrichment';
import { exporterMigrations } from './migrations/exporters';
import { flowFieldMigrations } from './migrations/flow-fields';
import { foldedRollupMigrations } from './migrations/folded-rollups';
import { governanceMigrations } from './migrations/governance';
import { personMigrations } from './migrations/persons';
import type { Migration, MigrationContext, Retention } from './migrations/migration';
import { platformMigrations } from './migrations/platform';
import { playbookMigrations } from './migrations/playbooks';
import { policyMitigationBoundsMigrations } from './migrations/policy-mitigation-bounds';
import { prefixMigrations } from './migrations/prefixes';
import { replayGateMigrations } from './migrations/replay-gate';
import { rollupReceiptMigrations } from './migrations/rollup-receipts';
import { singleSignOnMigrations } from './migrations/single-sign-on';
import { guardrailMigrations } from './migrations/guardrails';
import { savedViewMigrations } from './migrations/saved-views';
import { storageV2Migrations } from './migrations/storage-v2';
import { telemetryMigrations } from './migrations/telemetry';
import { webhookMigrations } from './migrations/webhooks';

/** Schema as ordered, idempotent migrations, written through the server generation's dialect. */
export const migrations: Migration[] = [...platformMigrations, ...telemetryMigrations, ...governanceMigrations, ...storageV2Migrations, ...exporterMigrations, ...flowFieldMigrations, ...detectionRulesMigrations, ...webhookMigrations, ...replayGateMigrations, ...rollupReceiptMigrations, ...prefixMigrations, ...policyMitigationBoundsMigrations, ...playbookMigrations, ...automationMigrations, ...personMigrations, ...singleSignOnMigrations, ...guardrailMigrations, ...addressEnrichmentMigrations, ...interfaceEnrichmentMigrations, ...dimensionRollupMigrations, ...savedViewMigrations, ...attackWindowMigrations, ...foldedRollupMigrations, ...foldedDimensionRollupMigrations];

export interface MigrateOptions {
  retention: Retention;
  log: Logger;
  /** The dialect to write the schema in; the server's own by default (tests build an older schema with another). */
  dialect?: Dialect;
  /** Stop after the migration with this id (tests build the schema an earlier release left). */
  through?: string;
}

export async function migrate(ch: ClickHouse, opts: MigrateOptions): Promise<string[]> {
  const ctx: MigrationContext = { db: ch.database, dialect: opts.dialect ?? ch.dialect, retention: opts.retention };
  await ch.exec(
    `CREATE TABLE IF NOT EXISTS ${ctx.db}.schema_migrations (id String, applied_at Int64) ENGINE = MergeTree ORDER BY id`,
  );
  const applied = new Set((await ch.query<{ id: string }>(`SELECT id FROM ${ctx.db}.schema_migrations`)).map((r) => r.id));
  const newlyApplied: string[] = [];
  for (const migration of migrations) {
    if (applied.has(migration.id)) continue;
    for (const statement of migration.statements(ctx)) await ch.exec(statement);
    await migration.run?.(ch, ctx);
    await ch.insertJsonEachRow('schema_migrations', JSON.stringify({ id: migration.id, applied_at: Date.now() }) + '\n');
    newlyApplied.push(migration.id);
    opts.log.info({ migration: migration.id, generation: ctx.dialect.generation }, 'migration applied');
    if (migration.id === opts.through) break;
  }
  return newlyApplied;
}
