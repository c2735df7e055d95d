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

/**
 * Analysts' queries, computed in ClickHouse. Callers bound every query by a
 * time range and a row limit; top talkers and series read the 1-minute
 * rollups, so their cost grows with minutes, not with flows.
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
   * Destinations and protocols read the 1-minute rollup, so `from` is floored
   * and `to` ceiled to whole minutes; sources are aggregated from the flows
   * themselves over the exact range.
   */
  async topTalkers(orgId: string, by: TalkerDimension, metric: TalkerMetric, range: TimeRange, limit: number) {
    const d = this.ch.dialect;
    const key = by === 'protocol' ? 'protocol' : d.addressText(by);
    const source =
      by === 'src_ip'
        ? `SELECT ${key} AS key, sum(${metric}) AS value, count() AS flows FROM ${this.db}.flows
           WHERE org_id = ${str(orgId)} AND ts >= ${d.timeLiteral(range.from)} AND ts < ${d.timeLiteral(range.to)}`
        : `SELECT ${key} AS key, sum(${metric}) AS value, sum(flows) AS flows FROM ${this.db}.flows_1m
           WHERE org_id = ${str(orgId)} AND minute >= ${d.bucketLiteral(floorMinute(range.from))} AND minute < ${d.bucketLiteral(ceilMinute(range.to))}`;
    const rows = await this.ch.query<{ key: string; value: string; flows: string }>(
      `${source} GROUP BY key ORDER BY value DESC, key ASC LIMIT ${int(limit)}`,
    );
    return rows.map((r) => ({ [by]: r.key, [metric]: Number(r.value), flows: Number(r.flows) }));
  }

  async metricSeries(orgId: string, service: string, metric: string, stepMs: number, range: TimeRange) {
    const rows = await this.ch.query<{ t: string; total: number; samples: string }>(
      `SELECT intDiv(minute, ${int(stepMs)}) * ${int(stepMs)} AS t, sum(total) AS total, sum(samples) AS samples
       FROM ${this.db}.metrics_1m
       WHERE org_id = ${str(orgId)} AND service = ${str(service)} AND metric = ${str(metric)}
         AND minute >= ${int(floorMinute(range.from))} AND minute < ${int(ceilMinute(range.to))}
       GROUP BY t ORDER BY t`,
    );
    return rows.map((r) => ({
      t: new Date(Number(r.t)).toISOString(),
      avg: Number(r.total) / Number(r.samples),
      samples: Number(r.samples),
    }));
  }
}

const floorMinute = (ms: number) => Math.floor(ms / 60_000) * 60_000;
const ceilMinute = (ms: number) => Math.ceil(ms / 60_000) * 60_000;
