import type { CheckedFilter } from '../core/analytics/filter/check';
import type { StepTotals } from '../core/analytics/rates';
import { flowFilterCatalog } from '../core/analytics/filter/catalog';
import { dimensionSpecs, type FlowDimension, type RollupFamily } from '../core/flow-dimensions';
import { familyResolutions, type FlowFilter, type FlowQueryPlan } from '../core/flow-query';
import { bucketMs, coarsestOf, flowResolutions, planSegments, type Resolution, type Segment, type TimeSpan } from '../core/resolution';
import { filterSql } from './analytics/filter-sql';
import { pendingBuckets } from './rollup-fold';
import type { Dialect } from './dialect';
import { enrichedFlows, usesEnrichment } from './enrichment/interface-join';
import type { AnalystClickHouse } from './query-limits';
import { int, str, strList } from './sql';

/**
 * The SQL of analysts' flow queries: filters on any dimension, top keys by
 * up to three dimensions, traffic per step. A query reads the rollups of its
 * plan (core/flow-query.ts) segment by segment (core/resolution.ts), or the
 * raw flows alone, and everything is summed in ClickHouse. Column names come
 * from the fixed list of dimensions; values reach SQL only through the
 * literal helpers and the dialect. Callers hand in a ClickHouse whose every
 * query runs under the analysts' limits (query-limits.ts).
 */
export type FlowMetric = 'bytes' | 'packets' | 'flows';
export type DimensionValue = string | number | null;
export type FlowKey = Partial<Record<FlowDimension, DimensionValue>>;

/** What a query is about: a workspace, a range, its filters and where it is answered. */
export interface FlowScope {
  orgId: string;
  range: TimeSpan;
  filters: readonly FlowFilter[];
  /** The filter expression (the `filter` parameter), whose tables include the plan's source. */
  filter?: CheckedFilter;
  plan: FlowQueryPlan;
}

export interface FlowTopRow {
  key: FlowKey;
  /** Names resolved when read for the AS dimensions grouped by (`src_as_name`, `dst_as_name`). */
  names?: Record<string, string | null>;
  /** Each dimension's value as the text the series compares keys by. */
  text: string[];
  bytes: number;
  packets: number;
  flows: number;
}

export interface FlowTop {
  rows: FlowTopRow[];
  resolution: Resolution;
  segments: Segment[];
}

/** Per step volumes of the top keys (by their text) and of all the others (null). */
export interface FlowStepVolumes {
  byKey: Map<string | null, StepTotals[]>;
  resolution: Resolution;
  segments: Segment[];
}

/** The conditions of filters, to AND: the values of one filter OR. */
export function filterConditions(d: Dialect, filters: readonly FlowFilter[]): string[] {
  return filters.map((f) => {
    if (f.kind === 'address') return `(${f.ranges.map((r) => d.addressInRange(f.dimension, r.first, r.last)).join(' OR ')})`;
    if (f.kind === 'number') return `${f.dimension} IN (${f.values.map(int).join(', ')})`;
    return `${f.dimension} IN ${strList(f.values)}`;
  });
}

/** An address column as clients see it; other dimensions are their value. */
const keyText = (d: Dialect, dimension: FlowDimension, column: string) =>
  dimensionSpecs[dimension].kind === 'address' ? d.addressText(column) : column;

/** A dimension's value as the API shows it: numbers as numbers, an absent exporter (`::`, '') or label ('') as null. */
function presented(dimension: FlowDimension, value: unknown): DimensionValue {
  const kind = dimensionSpecs[dimension].kind;
  if (kind === 'number') return Number(value);
  const text = String(value);
  if (kind === 'text') return text === '' ? null : text;
  return dimension === 'exporter' && (text === '' || text === '::') ? null : text;
}

/**
 * The segments a plan reads: the rollups of its family at the resolutions
 * given that the family keeps, or the raw flows alone. The folded levels'
 * buckets still pending are read from the minutes (storage/rollup-fold.ts).
 */
async function segmentsOf(ch: AnalystClickHouse, scope: FlowScope, available: readonly Resolution[] = flowResolutions): Promise<Segment[]> {
  const { plan, range } = scope;
  if (plan.source === 'raw') return [{ ...range, resolution: 'raw' }];
  const kept = familyResolutions[plan.source];
  const folded = kept.includes('5m') ? await pendingBuckets(ch, scope.orgId, range.from, range.to) : new Set<number>();
  return planSegments(range, available.filter((r) => kept.includes(r)), folded);
}

interface SegmentSource {
  table: string;
  where: string;
  /** The row's time (its bucket's start on a rollup) in epoch milliseconds. */
  ms: string;
  /** How many flows a group holds. */
  flows: string;
}

const rollupTables: Readonly<Record<RollupFamily, string>> = { dst: 'flows', src: 'flows_src', dims: 'flows_dims' };

/**
 * A segment's rows with the interface and exporter names and classes joined
 * in (storage/enrichment/interface-join.ts), when the query uses any: the
 * raw flows, or a dimension rollup (which keeps exporter, in_if and out_if).
 * `rows` is what the segment reads, `where` its time and workspace bounds.
 */
function withEnrichment(ch: AnalystClickHouse, scope: FlowScope, rows: { table: string; where: string[]; columns: string[] }, used: readonly string[], filters: string[]): Pick<SegmentSource, 'table' | 'where'> {
  if (!usesEnrichment(used)) return { table: rows.table, where: [...rows.where, ...filters].join(' AND ') };
  const columns = [...rows.columns, ...used.filter((x) => !usesEnrichment([x]))];
  const source = `SELECT ${[...new Set([...columns, 'exporter', 'in_if', 'out_if'])].join(', ')} FROM ${rows.table} WHERE ${rows.where.join(' AND ')}`;
  return { table: enrichedFlows(ch.dialect, ch.database, scope.orgId, source, columns, used), where: filters.length ? filters.join(' AND ') : '1' };
}

/** The segments of one resolution, read by one subquery over all their spans. */
interface Read {
  resolution: Resolution;
  spans: TimeSpan[];
}

/**
 * One read per resolution, in the order the resolutions first appear:
 * pending buckets (storage/rollup-fold.ts) may split a range into many
 * segments, and one subquery each would cost the engine a pipeline each.
 */
function readsOf(segments: readonly Segment[]): Read[] {
  const reads = new Map<Resolution, TimeSpan[]>();
  for (const s of segments) reads.set(s.resolution, [...(reads.get(s.resolution) ?? []), { from: s.from, to: s.to }]);
  return [...reads].map(([resolution, spans]) => ({ resolution, spans }));
}

/** A time column within any of the spans. */
const within = (spans: readonly TimeSpan[], column: string, literal: (ms: number) => string) =>
  `(${spans.map((t) => `(${column} >= ${literal(t.from)} AND ${column} < ${literal(t.to)})`).join(' OR ')})`;

/** `grouped`: the dimensions the query groups by; with the filters', they say whether interface enrichment is joined in. */
function sourceOf(ch: AnalystClickHouse, scope: FlowScope, s: Read, grouped: readonly FlowDimension[]): SegmentSource {
  const d = ch.dialect;
  const table = s.resolution === 'raw' ? 'raw' : scope.plan.source;
  const filters = [...filterConditions(d, scope.filters), ...(scope.filter ? [filterSql(d, scope.filter, flowFilterCatalog, table)] : [])];
  const used = [...grouped, ...scope.filters.map((f) => f.dimension), ...(scope.filter?.dimensions ?? [])];
  if (s.resolution === 'raw' || scope.plan.source === 'raw') {
    const where = [`org_id = ${str(scope.orgId)}`, within(s.spans, 'ts', (ms) => d.timeLiteral(ms))];
    const rows = { table: `${ch.database}.flows`, where, columns: ['ts', 'bytes', 'packets'] };
    return { ...withEnrichment(ch, scope, rows, used, filters), ms: d.msOf('ts'), flows: 'count()' };
  }
  const where = [`org_id = ${str(scope.orgId)}`, within(s.spans, 'minute', (ms) => d.bucketLiteral(ms))];
  const rows = { table: `${ch.database}.${rollupTables[scope.plan.source]}_${s.resolution}`, where, columns: ['minute', 'bytes', 'packets', 'flows'] };
  return { ...withEnrichment(ch, scope, rows, used, filters), ms: d.bucketMs('minute'), flows: 'sum(flows)' };
}

/**
 * Which keys a top-N may answer: those whose texts (as FlowTopRow.text
 * spells them) are listed (the previous period of keys already ranked), or
 * those whose first dimension's text starts with a prefix, in any case (a
 * completion).
 */
export type KeyRestriction = { texts: ReadonlyArray<readonly string[]> } | { prefix: string };

/** The HAVING clause of a restriction, over the outer query's key texts `d0`, `d1`… */
function havingOf(restriction: KeyRestriction | undefined, width: number): string {
  if (!restriction) return '';
  if ('prefix' in restriction) {
    const pattern = restriction.prefix.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`);
    return ` HAVING lowerUTF8(toString(d0)) LIKE ${str(`${pattern}%`)}`;
  }
  if (restriction.texts.length === 0) return ' HAVING 0';
  const columns = Array.from({ length: width }, (_, i) => `toString(d${i})`);
  const tuples = restriction.texts.map((t) => (width === 1 ? str(t[0] ?? '') : `(${columns.map((_, i) => str(t[i] ?? '')).join(', ')})`));
  return ` HAVING ${width === 1 ? columns[0] : `(${columns.join(', ')})`} IN (${tuples.join(', ')})`;
}

/**
 * The top keys by up to three dimensions over the exact range: one
 * aggregate per segment, summed by key (rollups are SummingMergeTree, so
 * rows of one key may not be merged yet: always sum). Ties go by key.
 */
export async function topFlows(
  ch: AnalystClickHouse, scope: FlowScope, by: readonly FlowDimension[], metric: FlowMetric, limit: number, only?: KeyRestriction,
): Promise<FlowTop> {
  const segments = await segmentsOf(ch, scope);
  const keys = by.map((_, i) => `k${i}`).join(', ');
  const parts = readsOf(segments).map((s) => {
    const src = sourceOf(ch, scope, s, by);
    return `SELECT ${by.map((dim, i) => `${dim} AS k${i}`).join(', ')}, sum(bytes) AS b, sum(packets) AS p, ${src.flows} AS n
      FROM ${src.table} WHERE ${src.where} GROUP BY ${keys}`;
  });
  const texts = by.map((dim, i) => `${keyText(ch.dialect, dim, `k${i}`)} AS d${i}`).join(', ');
  const rows = await ch.query<Record<string, unknown>>(
    `SELECT ${texts}, sum(b) AS bytes, sum(p) AS packets, sum(n) AS flows FROM (${parts.join(' UNION ALL ')})
     GROUP BY ${keys}${havingOf(only, by.length)} ORDER BY ${metric} DESC, ${by.map((_, i) => `d${i} ASC`).join(', ')} LIMIT ${int(limit)}`,
  );
  return {
    rows: rows.map((r) => ({
      key: Object.fromEntries(by.map((dim, i) => [dim, presented(dim, r[`d${i}`])])),
      text: by.map((dim, i) => (dimensionSpecs[dim].kind === 'number' ? String(Number(r[`d${i}`])) : String(r[`d${i}`]))),
      bytes: Number(r.bytes),
      packets: Number(r.packets),
      flows: Number(r.flows),
    })),
    resolution: coarsestOf(segments),
    segments,
  };
}

/** A split key as text, the way topFlows' `text` spells it. */
const splitText = (d: Dialect, dimension: FlowDimension, column: string) =>
  dimensionSpecs[dimension].kind === 'number' ? `toString(${column})` : keyText(d, dimension, column);

/**
 * Bytes and packets per step (steps start at multiples of `stepMs` since the
 * epoch), from the rollups whose bucket divides the step and the raw flows
 * at the edges. With a split, the volumes of each of the keys given (their
 * text) and of all the rest (under null), so every step sums to its total.
 */
export async function flowStepVolumes(
  ch: AnalystClickHouse,
  scope: FlowScope,
  stepMs: number,
  split?: { dimension: FlowDimension; texts: readonly string[] },
): Promise<FlowStepVolumes> {
  const available = flowResolutions.filter((r) => r === 'raw' || stepMs % bucketMs[r] === 0);
  const segments = await segmentsOf(ch, scope, available);
  const splitting = split !== undefined && split.texts.length > 0;
  const parts = readsOf(segments).map((s) => {
    const src = sourceOf(ch, scope, s, splitting ? [split.dimension] : []);
    return `SELECT toInt64(intDiv(${src.ms}, ${int(stepMs)}) * ${int(stepMs)}) AS t${splitting ? `, ${split.dimension} AS k0` : ''},
        sum(bytes) AS b, sum(packets) AS p, ${src.flows} AS n FROM ${src.table} WHERE ${src.where} GROUP BY t${splitting ? ', k0' : ''}`;
  });
  let source = parts.join(' UNION ALL ');
  if (splitting) {
    const kt = splitText(ch.dialect, split.dimension, 'k0');
    const list = strList(split.texts);
    source = `SELECT t, ${kt} IN ${list} AS top, if(${kt} IN ${list}, ${kt}, '') AS key, b, p, n FROM (${source})`;
  } else {
    source = `SELECT t, 0 AS top, '' AS key, b, p, n FROM (${source})`;
  }
  const rows = await ch.query<{ t: string; top: number; key: string; bytes: string; packets: string; flows: string }>(
    `SELECT t, top, key, sum(b) AS bytes, sum(p) AS packets, sum(n) AS flows FROM (${source}) GROUP BY t, top, key ORDER BY t`,
  );
  const byKey = new Map<string | null, StepTotals[]>();
  for (const r of rows) {
    const key = Number(r.top) ? r.key : null;
    const list = byKey.get(key) ?? [];
    list.push({ t: Number(r.t), bytes: Number(r.bytes), packets: Number(r.packets), flows: Number(r.flows) });
    byKey.set(key, list);
  }
  return { byKey, resolution: coarsestOf(segments), segments };
}
