/**
 * A schema migration: ordered, idempotent statements. Where Debian's
 * ClickHouse 18.16 lacks a feature, a migration reads the server generation
 * from the context and takes the documented fallback.
 */
export interface MigrationContext {
  db: string;
  /** True on servers older than 19 (Debian's 18.16). */
  legacy: boolean;
  retentionDays: number;
}

export interface Migration {
  id: string;
  statements(ctx: MigrationContext): string[];
}
