import { bucketMs, seriesResolution, type BucketResolution } from '../core/resolution';
import type { ClickHouse } from './clickhouse';
import { enrichedTextDimensions, type EnrichedTextDimension, type FlowDimension } from '../core/flow-dimensions';
import { asNamesOf } from './enrichment/enrichment-repo';
import type { FlowFilter } from '../core/flow-query';
import type { StepTotals } from '../core/analytics/rates';
import type { CheckedFilter } from '../core/analytics/filter/check';
import { flowFilterCatalog } from '../core/analytics/filter/catalog';
import { filterSql } from './analytics/filter-sql';
import { filterConditions, flowStepVolumes, topFlows, type FlowKey, type FlowMetric, type FlowScope, type FlowTop, type KeyRestriction } from './flow-analytics';
import { defaultQueryLimits, limitedClickHouse, type AnalystClickHouse, type QueryLimits } from './query-limits';
import { int, str } from './sql';

export interface TimeRange {
  from: number;
  to: number;
}

/** A stored flow as analysts read it: times in epoch milliseconds, an exporter's absent fields as null or 0. */
export interface FlowRecord {
  event_id: string;
  ts: number;
  src_ip: string;
  dst_ip: string;
  src_port: number;
  dst_port: number;
  protocol: string;
  bytes: number;
  packets: number;
  exporter: string | null;
  in_if: number;
  out_if: number;
  src_as: number;
  dst_as: number;
  tcp_flags: number;
  tos: number;
  flow_start: number | null;
  flow_end: number | null;
  sampling_rate: number;
  /** The names of src_as and dst_as, resolved when read (table as_names); null where none is known. */
  src_as_name: string | null;
  dst_as_name: string | null;
  /** The id of the address databases that enriched the flow (table enrichment_versions); 0 for flows stored before enrichment. */
  enrichment_version: number;
}

/** A flow record with the text dimensions enrichment stores (countries, network labels): '' as null. */
export type EnrichedFlowRecord = FlowRecord & Partial<Record<EnrichedTextDimension, string | null>>;

/** A traffic series: its key (null for the whole traffic, `{ other: true }` for what the top keys leave) and volumes per step. */
export interface FlowSeries {
  key: FlowKey | { other: true } | null;
  volumes: StepTotals[];
}

/** How a series is split: by the top `limit` keys of a dimension by `metric`, or by the keys whose texts are given (in that order). */
export type SeriesSplit = { dimension: FlowDimension; limit: number; metric?: FlowMetric } | { dimension: FlowDimension; keys: readonly FlowKey[]; texts: readonly string[] };

export interface MetricSeries {
  data: Array<{ t: string; avg: number; samples: number }>;
  resolution: BucketResolution;
}

/**
 * Analysts' queries, computed in ClickHouse. Callers bound every query by a
 * time range and a row limit; top keys and series read the coarsest
 * rollups that answer the range (core/resolution.ts), so their cost grows
 * with hours and the minutes at the edges, not with flows. A flow query
 * grouped or filtered on a dimension no rollup keeps reads the raw flows
 * (core/flow-query.ts plans it; flow-analytics.ts holds its SQL). Every
 * query runs under the engine limits given (time, memory, rows read), so
 * what the bounds above leave open is stopped by ClickHouse itself.
 */
export class AnalyticsRepo {
  private readonly ch: AnalystClickHouse;

  constructor(ch: ClickHouse, limits: QueryLimits = defaultQueryLimits) {
    this.ch = limitedClickHouse(ch, limits);
  }

  private get db() {
    return this.ch.database;
  }

  async flows(
    orgId: string, range: TimeRange, filters: readonly FlowFilter[], limit: number, after?: { ts: number; event_id: string }, filter?: CheckedFilter,
  ): Promise<EnrichedFlowRecord[]> {
    const d = this.ch.dialect;
    const where = [`org_id = ${str(orgId)}`, `ts >= ${d.timeLiteral(range.from)}`, `ts < ${d.timeLiteral(range.to)}`, ...filterConditions(d, filters)];
    if (filter) where.push(filterSql(d, filter, flowFilterCatalog, 'raw'));
    if (after) {
      const at = d.timeLiteral(after.ts);
      where.push(`(ts < ${at} OR (ts = ${at} AND event_id < ${str(after.event_id)}))`);
    }
    const rows = await this.ch.query<Record<string, unknown>>(
      `SELECT event_id, ${d.msOf('ts')} AS ts_ms, ${d.addressText('src_ip')} AS src, ${d.addressText('dst_ip')} AS dst,
         src_port, dst_port, protocol, bytes, packets, ${d.addressText('exporter')} AS exporter_text, in_if, out_if, src_as, dst_as,
         tcp_flags, tos, ${d.msOf('flow_start')} AS start_ms, ${d.msOf('flow_end')} AS end_ms, sampling_rate,
         ${enrichedTextDimensions.join(', ')}, enrichment_version FROM ${this.db}.flows
       WHERE ${where.join(' AND ')} ORDER BY ts DESC, event_id DESC LIMIT ${int(limit)}`,
    );
    const names = await asNamesOf(this.ch, rows.flatMap((r) => [Number(r.src_as), Number(r.dst_as)]));
    return rows.map((r) => flowRecord(r, names));
  }

  /** The top keys by up to three dimensions over the exact range, with the plan's rollups or the raw flows; `only` restricts the keys. */
  async topFlows(scope: FlowScope, by: readonly FlowDimension[], metric: FlowMetric, limit: number, only?: KeyRestriction): Promise<FlowTop> {
    const top = await topFlows(this.ch, scope, by, metric, limit, only);
    const asDimensions = by.filter((dim) => dim === 'src_as' || dim === 'dst_as');
    if (asDimensions.length === 0) return top;
    // AS names are resolved when read: a renamed AS needs no rewrite of stored flows.
    const names = await asNamesOf(this.ch, top.rows.flatMap((r) => asDimensions.map((dim) => Number(r.key[dim]))));
    for (const row of top.rows) row.names = Object.fromEntries(asDimensions.map((dim) => [`${dim}_name`, names.get(Number(row.key[dim])) ?? null]));
    return top;
  }

  /**
   * Traffic per step: one series, or one per top key of `split` over the
   * range (by its metric, bytes by default; or the keys it gives, as the
   * previous period takes the current one's) and one for all the others,
   * which sum to the same total. The points are the steps that carried
   * traffic (callers fill); `texts` are the split keys' texts.
   */
  async flowSeries(scope: FlowScope, stepMs: number, split?: SeriesSplit) {
    if (!split) {
      const all = await flowStepVolumes(this.ch, scope, stepMs);
      const series: FlowSeries[] = [{ key: null, volumes: all.byKey.get(null) ?? [] }];
      return { series, texts: [] as string[], resolution: all.resolution, segments: all.segments };
    }
    const ranked = 'keys' in split ? undefined : await topFlows(this.ch, scope, [split.dimension], split.metric ?? 'bytes', split.limit);
    const keys = ranked ? ranked.rows.map((r) => r.key) : 'keys' in split ? split.keys : [];
    const texts = ranked ? ranked.rows.map((r) => r.text[0] ?? '') : 'texts' in split ? [...split.texts] : [];
    const steps = await flowStepVolumes(this.ch, scope, stepMs, { dimension: split.dimension, texts });
    const series: FlowSeries[] = [
      ...keys.map((key, i) => ({ key, volumes: steps.byKey.get(texts[i] ?? '') ?? [] })),
      { key: { other: true }, volumes: steps.byKey.get(null) ?? [] },
    ];
    return { series, texts, resolution: steps.resolution, segments: steps.segments };
  }

  /**
   * Points of `stepMs` from the coarsest metric rollup whose bucket divides
   * the step and both ends of the range; on the 1-minute rollup an unaligned
   * end widens to its minute. Metric buckets are epoch milliseconds (Int64)
   * on every generation, unlike the flow rollups'.
   */
  async metricSeries(orgId: string, service: string, metric: string, stepMs: number, range: TimeRange): Promise<MetricSeries> {
    const resolution = seriesResolution(stepMs, range);
    const size = bucketMs[resolution];
    const rows = await this.ch.query<{ t: string; total: number; samples: string }>(
      `SELECT intDiv(minute, ${int(stepMs)}) * ${int(stepMs)} AS t, sum(total) AS total, sum(samples) AS samples
       FROM ${this.db}.metrics_${resolution}
       WHERE org_id = ${str(orgId)} AND service = ${str(service)} AND metric = ${str(metric)}
         AND minute >= ${int(Math.floor(range.from / size) * size)} AND minute < ${int(Math.ceil(range.to / size) * size)}
       GROUP BY t ORDER BY t`,
    );
    const data = rows.map((r) => ({
      t: new Date(Number(r.t)).toISOString(),
      avg: Number(r.total) / Number(r.samples),
      samples: Number(r.samples),
    }));
    return { data, resolution };
  }
}

const msOrNull = (value: unknown) => (Number(value) ? Number(value) : null);

function flowRecord(r: Record<string, unknown>, names: ReadonlyMap<number, string>): EnrichedFlowRecord {
  const exporter = String(r.exporter_text);
  const record: EnrichedFlowRecord = {
    event_id: String(r.event_id),
    ts: Number(r.ts_ms),
    src_ip: String(r.src),
    dst_ip: String(r.dst),
    src_port: Number(r.src_port),
    dst_port: Number(r.dst_port),
    protocol: String(r.protocol),
    bytes: Number(r.bytes),
    packets: Number(r.packets),
    exporter: exporter === '' || exporter === '::' ? null : exporter,
    in_if: Number(r.in_if),
    out_if: Number(r.out_if),
    src_as: Number(r.src_as),
    dst_as: Number(r.dst_as),
    tcp_flags: Number(r.tcp_flags),
    tos: Number(r.tos),
    flow_start: msOrNull(r.start_ms),
    flow_end: msOrNull(r.end_ms),
    sampling_rate: Number(r.sampling_rate),
    src_as_name: names.get(Number(r.src_as)) ?? null,
    dst_as_name: names.get(Number(r.dst_as)) ?? null,
    enrichment_version: Number(r.enrichment_version),
  };
  for (const dim of enrichedTextDimensions) record[dim] = typeof r[dim] === 'string' && r[dim] !== '' ? r[dim] : null;
  return record;
}
