import { defaultsOf } from '../core/settings';
import { clickhouseSettings } from './clickhouse.config';
import { dialectOf } from './dialect';
import { migrations } from './migrations';
import type { MigrationContext } from './migrations/migration';

/**
 * The schema for a replicated ClickHouse cluster, derived from the same
 * migrations the service applies: every table becomes its Replicated*
 * engine and every statement runs ON CLUSTER. deploy/clickhouse/cluster.sql
 * is this function's output (npm run ddl:cluster), and a test keeps it so.
 * Only the statements: what a migration does in its step (18.16's added
 * columns, back-fills) is left to the service's own migrations, run once
 * against each replica after it (docs/operations/cluster.md).
 */
// The database and retentions of the service's defaults (CLICKHOUSE_DATABASE, RETENTION_*).
const { clickhouse } = defaultsOf(clickhouseSettings);
const defaultContext: MigrationContext = { db: clickhouse.database, dialect: dialectOf('26'), retention: clickhouse.retention };

export function clusterDdl(ctx: MigrationContext = defaultContext): string {
  const statements = migrations.flatMap((m) => m.statements(ctx).map((sql) => ({ id: m.id, sql: toCluster(sql) })));
  return (
    '-- Generated from storage/migrations by storage/cluster-ddl.ts: do not edit by hand.\n' +
    `CREATE DATABASE IF NOT EXISTS ${ctx.db} ON CLUSTER '{cluster}';\n\n` +
    statements.map((s) => `-- ${s.id}\n${s.sql.replace(/\n\s+/g, '\n  ')};\n`).join('\n')
  );
}

function toCluster(sql: string): string {
  const dropped = /^DROP (?:VIEW|TABLE) IF EXISTS (\S+)$/.exec(sql)?.[1];
  if (dropped) return `${sql} ON CLUSTER '{cluster}'`;
  const altered = /^ALTER TABLE (\S+)/.exec(sql)?.[1];
  if (altered) return sql.replace(`ALTER TABLE ${altered}`, `ALTER TABLE ${altered} ON CLUSTER '{cluster}'`);
  const table = /CREATE (?:TABLE|MATERIALIZED VIEW) IF NOT EXISTS (\S+)/.exec(sql)?.[1];
  if (!table) throw new Error(`not a CREATE, ALTER, DROP VIEW or DROP TABLE statement: ${sql.slice(0, 60)}`);
  const path = `'/clickhouse/tables/{shard}/${table}', '{replica}'`;
  return sql
    .replace(`IF NOT EXISTS ${table}`, `IF NOT EXISTS ${table} ON CLUSTER '{cluster}'`)
    .replace(/ENGINE = (Replacing|Summing)?MergeTree(\(([^()]*|\([^()]*\))\))?/, (_m, kind: string | undefined, _args, inner: string | undefined) =>
      `ENGINE = Replicated${kind ?? ''}MergeTree(${path}${inner ? `, ${inner}` : ''})`,
    );
}

// `node dist/storage/cluster-ddl.js 18.16` writes it in the dialect of that server version instead (Debian's 18.16 refuses the current one).
if (require.main === module) {
  const serverVersion = process.argv[2];
  process.stdout.write(clusterDdl(serverVersion ? { ...defaultContext, dialect: dialectOf(serverVersion) } : defaultContext));
}
