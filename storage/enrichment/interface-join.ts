import {
  enrichedDimensions, exporterDimensions, interfaceDimensionColumns, isEnrichedDimension, type EnrichedDimension,
} from '../../core/enrichment/dimensions';
import type { Dialect } from '../dialect';
import { str } from '../sql';

/**
 * Flows with their interface names and classification, resolved when read:
 * flows keep the exporter's address and the ifIndex numbers only, and are
 * joined here with the workspace's rows of exporter_interfaces (once for the
 * input, once for the output interface) and exporter_classes, so a renamed
 * or reclassified interface needs no rewrite of stored flows, and flows
 * stored before any name was known read as empty names, never an error.
 *
 * One JOIN per SELECT, with USING and subqueries, because that is all
 * ClickHouse 18.16 takes; `ANY LEFT JOIN` keeps every flow once, a missing
 * row giving the column defaults ('' and 0). The right-hand sides hold one
 * workspace's interfaces, small enough for the join's hash table.
 */
export function usesEnrichment(dimensions: readonly string[]): boolean {
  return dimensions.some(isEnrichedDimension);
}

const interfaceSide = (db: string, orgId: string, side: 'in' | 'out') => {
  const columns = Object.entries(interfaceDimensionColumns).map(([suffix, column]) => `${column} AS ${side}_if_${suffix}`);
  return `SELECT exporter AS exporter_key, if_index AS ${side}_if, ${columns.join(', ')}
    FROM ${db}.exporter_interfaces FINAL WHERE org_id = ${str(orgId)}`;
};

const exporterSide = (db: string, orgId: string) =>
  `SELECT exporter AS exporter_key, ${exporterDimensions.join(', ')} FROM ${db}.exporter_classes FINAL WHERE org_id = ${str(orgId)}`;

const joined = (kept: readonly string[], added: readonly EnrichedDimension[]) => [...kept, ...added].join(', ');

/**
 * A subquery (to put after FROM) of the flows `source` selects, with every
 * enriched dimension as a column. `source` must select `exporter` (the
 * stored address), `in_if`, `out_if` and the `columns` named; the result
 * has those columns and the enriched ones. `source` reads the raw flows or
 * a dimension rollup (flows_dims_*, which keeps the same three columns):
 * each row is kept once, so a rollup's `flows` column passes through to be
 * summed where raw flows are counted (storage/flow-analytics.ts).
 */
export function enrichedFlows(d: Dialect, db: string, orgId: string, source: string, columns: readonly string[]): string {
  const base = [...new Set([...columns, 'exporter', 'in_if', 'out_if'])];
  const inDims = enrichedDimensions.filter((x) => x.startsWith('in_if_'));
  const outDims = enrichedDimensions.filter((x) => x.startsWith('out_if_'));
  const withKey = `SELECT ${base.join(', ')}, ${d.addressText('exporter')} AS exporter_key FROM (${source})`;
  // Current ClickHouse requires an alias on every joined subquery (joined_subquery_requires_alias); 18.16 takes them too.
  const withIn = `SELECT ${joined([...base, 'exporter_key'], inDims)} FROM (${withKey}) AS f
    ANY LEFT JOIN (${interfaceSide(db, orgId, 'in')}) AS i USING (exporter_key, in_if)`;
  const withOut = `SELECT ${joined([...base, 'exporter_key', ...inDims], outDims)} FROM (${withIn}) AS f
    ANY LEFT JOIN (${interfaceSide(db, orgId, 'out')}) AS o USING (exporter_key, out_if)`;
  return `(SELECT ${joined([...base, ...inDims, ...outDims], exporterDimensions)} FROM (${withOut}) AS f
    ANY LEFT JOIN (${exporterSide(db, orgId)}) AS e USING (exporter_key))`;
}
