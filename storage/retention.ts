import type { ClickHouse } from './clickhouse';
import type { Retention } from './migrations/migration';
import { str, strList } from './sql';

/**
 * Every table that expires rows, how long it keeps them, and the time its
 * TTL reads on current ClickHouse (flows and flow rollups hold ClickHouse
 * times; the others epoch milliseconds). On 18.16 the retention job drops
 * the same tables' daily partitions instead.
 */
export interface RetainedTable {
  table: string;
  days: (r: Retention) => number;
  ttlTime: string;
}

const epochMsTtl = (column: string) => `toDateTime(intDiv(${column}, 1000))`;

export const retainedTables: readonly RetainedTable[] = [
  { table: 'flows', days: (r) => r.raw, ttlTime: 'toDateTime(ts)' },
  { table: 'signals', days: (r) => r.raw, ttlTime: epochMsTtl('ts') },
  { table: 'metrics', days: (r) => r.raw, ttlTime: epochMsTtl('ts') },
  ...['flows_1m', 'flows_src_1m'].map((table) => ({ table, days: (r: Retention) => r.minute, ttlTime: 'toDateTime(minute)' })),
  ...['flows_5m', 'flows_src_5m', 'flows_dims_5m'].map((table) => ({ table, days: (r: Retention) => r.fiveMinutes, ttlTime: 'toDateTime(minute)' })),
  ...['flows_1h', 'flows_src_1h', 'flows_dims_1h'].map((table) => ({ table, days: (r: Retention) => r.hour, ttlTime: 'toDateTime(minute)' })),
  { table: 'metrics_1m', days: (r) => r.minute, ttlTime: epochMsTtl('minute') },
  { table: 'metrics_5m', days: (r) => r.fiveMinutes, ttlTime: epochMsTtl('minute') },
  { table: 'metrics_1h', days: (r) => r.hour, ttlTime: epochMsTtl('minute') },
  // The marks of 5-minute buckets the folded rollups go by (storage/rollup-fold.ts): as long as the minutes they are folded from.
  { table: 'rollup_marks', days: (r) => r.minute, ttlTime: 'toDateTime(bucket)' },
  // Counts of datagrams from unregistered exporters: kept as long as raw telemetry.
  { table: 'unknown_exporters', days: (r) => r.raw, ttlTime: epochMsTtl('minute') },
  // The rate detectors' attack details (a few KB a decision): kept as long as the hourly rollups, so an
  // incident's attack is explained for as long as its traffic can be charted.
  { table: 'attack_windows', days: (r) => r.hour, ttlTime: epochMsTtl('window_end') },
];

/** The days of a table's TTL as ClickHouse shows it in `engine_full`. */
const ttlDaysOf = (engineFull: string) => Number(/TTL .*?(?:INTERVAL (\d+) DAY|toIntervalDay\((\d+)\))/.exec(engineFull)?.slice(1).find(Boolean) ?? NaN);

/**
 * Brings every table's TTL to the configured retention (current ClickHouse):
 * run at each start, so a changed setting applies to existing tables. Only a
 * table whose TTL differs is altered. Returns the tables it changed.
 */
export async function applyRetentionTtl(ch: ClickHouse, retention: Retention): Promise<string[]> {
  if (ch.dialect.generation === 'legacy') return [];
  const rows = await ch.query<{ name: string; engine_full: string }>(
    `SELECT name, engine_full FROM system.tables WHERE database = ${str(ch.database)} AND name IN ${strList(retainedTables.map((t) => t.table))}`,
  );
  const current = new Map(rows.map((r) => [r.name, ttlDaysOf(r.engine_full)]));
  const changed: string[] = [];
  for (const t of retainedTables) {
    const days = t.days(retention);
    if (!current.has(t.table) || current.get(t.table) === days) continue;
    await ch.exec(`ALTER TABLE ${ch.database}.${t.table} MODIFY TTL ${t.ttlTime} + INTERVAL ${Math.trunc(days)} DAY`);
    changed.push(t.table);
  }
  return changed;
}
