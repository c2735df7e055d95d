import type { QueryLimit } from '../core/errors';
import type { ClickHouse } from './clickhouse';
import { int } from './sql';

/**
 * What one analyst query may spend in ClickHouse; 0 lifts a limit. A query
 * past one is stopped by the engine (error 158, 159, 241), which the API
 * answers 422 QUERY_TOO_EXPENSIVE (api/error-middleware.ts).
 */
export interface QueryLimits {
  maxExecutionSeconds: number;
  maxMemoryBytes: number;
  maxRowsToRead: number;
}

export const defaultQueryLimits: QueryLimits = {
  maxExecutionSeconds: 30,
  maxMemoryBytes: 1024 ** 3,
  maxRowsToRead: 100_000_000,
};

/**
 * The SETTINGS clause that puts a SELECT under the limits. Both generations
 * take it at the end of a SELECT, under the same names (18.16's
 * system.settings lists all three), and it bounds the subqueries of a UNION
 * ALL together: rows read are counted over the whole query.
 */
export function limitSettings(limits: QueryLimits): string {
  return (
    ` SETTINGS max_execution_time = ${int(limits.maxExecutionSeconds)}, max_memory_usage = ${int(limits.maxMemoryBytes)},` +
    ` max_rows_to_read = ${int(limits.maxRowsToRead)}`
  );
}

/** A limit's value as people read it, for the error that reports it; undefined for one this service does not set. */
export function limitBound(limit: QueryLimit, limits: QueryLimits): string | undefined {
  switch (limit) {
    case 'max_execution_time':
      return limits.maxExecutionSeconds ? `${limits.maxExecutionSeconds} seconds` : undefined;
    case 'max_rows_to_read':
      return limits.maxRowsToRead ? `${limits.maxRowsToRead.toLocaleString('en-US')} rows` : undefined;
    case 'max_memory_usage':
      return limits.maxMemoryBytes ? `${Math.round(limits.maxMemoryBytes / 1024 ** 2).toLocaleString('en-US')} MiB` : undefined;
    default:
      return undefined;
  }
}

/** What analysts' queries use of a ClickHouse. */
export type AnalystClickHouse = Pick<ClickHouse, 'database' | 'dialect' | 'query'>;

/** The same ClickHouse, every query of it run under the limits. */
export function limitedClickHouse(ch: ClickHouse, limits: QueryLimits): AnalystClickHouse {
  const settings = limitSettings(limits);
  return {
    get database() {
      return ch.database;
    },
    // Read at each query: a dialect is known only once the engine started.
    get dialect() {
      return ch.dialect;
    },
    query: <T>(sql: string) => ch.query<T>(`${sql}${settings}`),
  };
}
