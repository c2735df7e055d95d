import type { ClickHouse } from '../clickhouse';
import type { Dialect } from '../dialect';
import { str } from '../sql';

/** How long each kind of table keeps its rows, in days. */
export interface Retention {
  /** Raw telemetry: flows, signals, metric events. */
  raw: number;
  /** 1-minute rollups. */
  minute: number;
  /** 5-minute rollups. */
  fiveMinutes: number;
  /** Hourly rollups. */
  hour: number;
}

/**
 * A schema migration: ordered, idempotent statements written through the
 * server generation's dialect, and optionally a step that converts data
 * already stored (it must be safe to run again after a crash part-way).
 */
export interface MigrationContext {
  db: string;
  dialect: Dialect;
  retention: Retention;
}

export interface Migration {
  id: string;
  statements(ctx: MigrationContext): string[];
  /** Converts or back-fills stored data; runs after the statements. */
  run?(ch: ClickHouse, ctx: MigrationContext): Promise<void>;
}

/**
 * A migration's steps that add columns to a table (each `name Type DEFAULT …`):
 * `ADD COLUMN IF NOT EXISTS` where the server has it; 18.16 has not, so there
 * the table's columns are looked up first and only the missing ones added,
 * so the migration can run again after a crash.
 */
export function columnsAdded(table: string, columns: readonly string[]): Pick<Migration, 'statements' | 'run'> {
  return {
    statements: ({ db, dialect }) => (dialect.generation === 'legacy' ? [] : columns.map((c) => `ALTER TABLE ${db}.${table} ADD COLUMN IF NOT EXISTS ${c}`)),
    async run(ch, { db, dialect }) {
      if (dialect.generation !== 'legacy') return;
      const present = new Set(
        (await ch.query<{ name: string }>(`SELECT name FROM system.columns WHERE database = ${str(db)} AND table = ${str(table)}`)).map((r) => r.name),
      );
      for (const column of columns) if (!present.has(column.split(' ')[0]!)) await ch.exec(`ALTER TABLE ${db}.${table} ADD COLUMN ${column}`);
    },
  };
}
