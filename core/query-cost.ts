import type { FlowQueryPlan } from './flow-query';

/**
 * What a read costs from its key's budget, in units, known before it runs.
 * Rollups answer a query with a few rows per hour whatever the traffic, so
 * such a query costs one unit; the raw flows grow with traffic, so a query
 * that reads them costs one unit and `rawDayUnits` per day of range it
 * started. Audit verification costs one unit and one per `auditEntriesPerUnit`
 * entries it may read.
 */
const day = 86_400_000;
export const rawDayUnits = 4;
export const auditEntriesPerUnit = 10_000;

/** A query on flows, metrics or rollups: by where its plan reads and the range it covers. */
export function queryCost(source: FlowQueryPlan['source'] | 'metrics', range: { from: number; to: number }): number {
  if (source !== 'raw') return 1;
  return 1 + rawDayUnits * Math.max(1, Math.ceil((range.to - range.from) / day));
}

/** Checking `entries` audit entries. */
export const auditVerifyCost = (entries: number): number => 1 + Math.ceil(Math.max(0, entries) / auditEntriesPerUnit);
