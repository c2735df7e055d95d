import type { ClickHouse } from '../clickhouse';
import type { Dialect } from '../dialect';

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
