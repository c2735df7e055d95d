import { bucketMs, coarsestOf, flowResolutions, planSegments, seriesResolution, type BucketResolution, type Resolution, type Segment } from '../core/resolution';
import type { ClickHouse } from './clickhouse';
import { int, str } from './sql';

export interface TimeRange {
  from: number;
  to: number;
}

export interface FlowFilters extends TimeRange {
  src_ip?: string;
  dst_ip?: string;
  protocol?: string;
}

export type TalkerDimension = 'src_ip' | 'dst_ip' | 'protocol';
export type TalkerMetric = 'bytes' | 'packets';

/** Top talkers, the coarsest resolution read, and which resolution answered which part of the range. */
export interface TopTalkers {
  data: Array<Record<string, string | number>>;
  resolution: Resolution;
  segments: Segment[];
}

export interface MetricSeries {
  data: Array<{ t: string; avg: number; samples: number }>;
  resolution: BucketResolution;
}

/**
 * Analysts' queries, computed in ClickHouse. Callers bound every query by a
 * time range and a row limit; top talkers and series read the coarsest
 * rollups that answer the range (core/resolution.ts), so their cost grows
 * with hours and the minutes at the edges, not with flows.
 */
export class AnalyticsRepo {
  constructor(private readonly ch: ClickHouse) {}

  private get db() {
    return this.ch.database;
  }

  async flows(orgId: string, f: FlowFilters, limit: number, after?: { ts: number; event_id: string }) {
    const d = this.ch.dialect;
    const where = [`org_id = ${str(orgId)}`, `ts >= ${d.timeLiteral(f.from)}`, `ts < ${d.timeLiteral(f.to)}`];
    if (f.src_ip) where.push(`src_ip = ${d.addressLiteral(f.src_ip)}`);
    if (f.dst_ip) where.push(`dst_ip = ${d.addressLiteral(f.dst_ip)}`);
    if (f.protocol) where.push(`protocol = ${str(f.protocol)}`);
    if (after) {
      const at = d.timeLiteral(after.ts);
      where.push(`(ts < ${at} OR (ts = ${at} AND event_id < ${str(after.event_id)}))`);
    }
    const rows = await this.ch.query<Record<string, unknown>>(
      `SELECT event_id, ${d.msOf('ts')} AS ts_ms, ${d.addressText('src_ip')} AS src, ${d.addressText('dst_ip')} AS dst,
         src_port, dst_port, protocol, bytes, packets FROM ${this.db}.flows
       WHERE ${where.join(' AND ')} ORDER BY ts DESC, event_id DESC LIMIT ${int(limit)}`,
    );
    return rows.map((r) => ({
      event_id: String(r.event_id),
      ts: Number(r.ts_ms),
      src_ip: String(r.src),
      dst_ip: String(r.dst),
      src_port: Number(r.src_port),
      dst_port: Number(r.dst_port),
      protocol: String(r.protocol),
      bytes: Number(r.bytes),
      packets: Number(r.packets),
    }));
  }

  /**
   * The top keys over the exact range: one aggregate per planned segment
   * (the hourly rollup for whole hours, finer rollups around them, the raw
   * flows for what is not a whole minute), summed by key. Rollups are
   * SummingMergeTree, so rows of one key may not be merged yet: always sum.
   */
  async topTalkers(orgId: string, by: TalkerDimension, metric: TalkerMetric, range: TimeRange, limit: number): Promise<TopTalkers> {
    const segments = planSegments(range, flowResolutions);
    const key = by === 'protocol' ? 'k' : this.ch.dialect.addressText('k');
    const parts = segments.map((s) => this.talkerSegment(orgId, by, metric, s));
    const rows = await this.ch.query<{ key: string; value: string; flows: string }>(
      `SELECT ${key} AS key, sum(v) AS value, sum(n) AS flows FROM (${parts.join(' UNION ALL ')})
       GROUP BY k ORDER BY value DESC, key ASC LIMIT ${int(limit)}`,
    );
    return {
      data: rows.map((r) => ({ [by]: r.key, [metric]: Number(r.value), flows: Number(r.flows) })),
      resolution: coarsestOf(segments),
      segments,
    };
  }

  /** One segment's aggregate by key, from the raw flows or the rollup of its resolution. */
  private talkerSegment(orgId: string, by: TalkerDimension, metric: TalkerMetric, s: Segment): string {
    const d = this.ch.dialect;
    if (s.resolution === 'raw') {
      return `SELECT ${by} AS k, sum(${metric}) AS v, count() AS n FROM ${this.db}.flows
        WHERE org_id = ${str(orgId)} AND ts >= ${d.timeLiteral(s.from)} AND ts < ${d.timeLiteral(s.to)} GROUP BY k`;
    }
    const table = `${by === 'src_ip' ? 'flows_src' : 'flows'}_${s.resolution}`;
    return `SELECT ${by} AS k, sum(${metric}) AS v, sum(flows) AS n FROM ${this.db}.${table}
      WHERE org_id = ${str(orgId)} AND minute >= ${d.bucketLiteral(s.from)} AND minute < ${d.bucketLiteral(s.to)} GROUP BY k`;
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
