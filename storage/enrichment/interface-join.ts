import {
  enrichedDimensions, exporterDimensions, interfaceDimensionColumns, isEnrichedDimension,
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

const joined = (kept: readonly string[], added: readonly string[]) => [...kept, ...added].join(', ');

/**
 * A subquery (to put after FROM) of the flows `source` selects, with the
 * enriched dimensions `wanted` names as columns. `source` must select
 * `exporter` (the stored address), `in_if`, `out_if` and the `columns`
 * named; the result has those columns and the enriched ones wanted. Only the
 * sides a wanted dimension needs are joined (input interfaces, output
 * interfaces, the exporter's class): each join costs a pass over every row.
 * `source` reads the raw flows or a dimension rollup (flows_dims_*, which
 * keeps the same three columns): each row is kept once, so a rollup's
 * `flows` column passes through to be summed where raw flows are counted
 * (storage/flow-analytics.ts).
 */
export function enrichedFlows(d: Dialect, db: string, orgId: string, source: string, columns: readonly string[], wanted: readonly string[] = enrichedDimensions): string {
  const base = [...new Set([...columns, 'exporter', 'in_if', 'out_if'])];
  const inDims = enrichedDimensions.filter((x) => x.startsWith('in_if_') && wanted.includes(x));
  const outDims = enrichedDimensions.filter((x) => x.startsWith('out_if_') && wanted.includes(x));
  const classDims = exporterDimensions.filter((x) => wanted.includes(x));
  let rows = `SELECT ${base.join(', ')}, ${d.addressText('exporter')} AS exporter_key FROM (${source})`;
  let kept = [...base, 'exporter_key'];
  // Current ClickHouse requires an alias on every joined subquery (joined_subquery_requires_alias); 18.16 takes them too.
  const join = (added: readonly string[], side: string, using: string) => {
    rows = `SELECT ${joined(kept, added)} FROM (${rows}) AS f ANY LEFT JOIN (${side}) AS j USING (${using})`;
    kept = [...kept, ...added];
  };
  if (inDims.length) join(inDims, interfaceSide(db, orgId, 'in'), 'exporter_key, in_if');
  if (outDims.length) join(outDims, interfaceSide(db, orgId, 'out'), 'exporter_key, out_if');
  if (classDims.length) join(classDims, exporterSide(db, orgId), 'exporter_key');
  return `(SELECT ${[...base, ...inDims, ...outDims, ...classDims].join(', ')} FROM (${rows}) AS f)`;
}
