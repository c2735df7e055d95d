import type { FlowQueryPlan } from './flow-query';

/**
 * What a read costs from its workspace's budget, in units, known before it
 * runs: the budget must refuse a read before the engine does the work,
 * and the engine's own figures (read_rows, read_bytes: chDB's result, the
 * HTTP answer's summary) come only once it is done, too late to refuse
 * anything. So the cost is an estimate of the rows a query reads, from
 * where its plan reads and how long its range is, and the engine's
 * max_rows_to_read (storage/query-limits.ts) bounds what it misses.
 *
 * Rollups answer with a few rows per key and bucket whatever the traffic:
 * one unit. The raw flows grow with traffic and range: one unit and one per
 * `rawHoursPerUnit` hours started (an hour: 2, a day: 5, a week: 29). The
 * defaults (600 units a minute, 300 at once) pay for three analysts of one
 * workspace on a visualize page refreshed every 5 s, its four reads on the
 * raw flows over the last hour, with the previous period
 * (test/integration/query-budget-pages.test.ts); an abusive client gets
 * no more than the budget's rate, whatever it asks. Audit verification costs
 * one unit and one per `auditEntriesPerUnit` entries it may read.
 */
const hour = 3_600_000;
export const rawHoursPerUnit = 6;
export const auditEntriesPerUnit = 10_000;

/** A query on flows, metrics or rollups: by where its plan reads and the range it covers. */
export function queryCost(source: FlowQueryPlan['source'] | 'metrics', range: { from: number; to: number }): number {
  if (source !== 'raw') return 1;
  return 1 + Math.max(1, Math.ceil((range.to - range.from) / (rawHoursPerUnit * hour)));
}

/** An analyst's top-N or series: with the previous period it runs twice, and costs twice. */
export const flowQueryCost = (source: FlowQueryPlan['source'], range: { from: number; to: number }, previous = false): number =>
  queryCost(source, range) * (previous ? 2 : 1);

/** Checking `entries` audit entries. */
export const auditVerifyCost = (entries: number): number => 1 + Math.ceil(Math.max(0, entries) / auditEntriesPerUnit);
