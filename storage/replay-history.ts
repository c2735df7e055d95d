import { defaultEnvironment, type DestinationMinute, type MetricThreshold } from '../core/detectors';
import type { MetricRow, SignalRow } from '../core/telemetry';
import type { RateFlow } from '../core/detection/traffic-class';
import type { ClickHouse } from './clickhouse';
import { exporterDestinationMinutes, signalColumns, signalFromRow, type KeyOfSignal } from './telemetry-store';
import { int, num, str, strList } from './sql';

/**
 * The historical reads of a replay. Everything heavy is a ClickHouse
 * aggregation over the window: a million flows come back as a few rows.
 */
export class ReplayHistory {
  constructor(private readonly ch: ClickHouse) {}

  private get db() {
    return this.ch.database;
  }

  /** Signals posted to /ingest (not derived by a detector) for one key within the window. */
  async postedSignals(orgId: string, key: KeyOfSignal, from: number, to: number): Promise<SignalRow[]> {
    const rows = await this.ch.query<Record<string, unknown>>(
      `SELECT ${signalColumns} FROM ${this.db}.signals
       WHERE org_id = ${str(orgId)} AND service = ${str(key.service)} AND environment = ${str(key.environment)}
         AND region = ${str(key.region)} AND ts >= ${int(from)} AND ts < ${int(to)} AND rule = ''`,
    );
    return rows.map(signalFromRow);
  }

  /** Metric events of the key within the window that reach a threshold (at least or at most its bound). */
  async metricsOverThresholds(orgId: string, key: KeyOfSignal, thresholds: Readonly<Record<string, MetricThreshold>>, from: number, to: number): Promise<MetricRow[]> {
    const rules = Object.entries(thresholds).flatMap(([m, t]) => [
      ...(t.atLeast !== undefined ? [`(metric = ${str(m)} AND value >= ${num(t.atLeast)})`] : []),
      ...(t.atMost !== undefined ? [`(metric = ${str(m)} AND value <= ${num(t.atMost)})`] : []),
    ]);
    if (rules.length === 0) return [];
    // A metric event without an environment correlates under `default`.
    const environments = key.environment === defaultEnvironment ? ['', defaultEnvironment] : [key.environment];
    const rows = await this.ch.query<Record<string, unknown>>(
      `SELECT org_id, event_id, ts, received_at, service, environment, metric, value, region FROM ${this.db}.metrics
       WHERE org_id = ${str(orgId)} AND service = ${str(key.service)} AND environment IN ${strList(environments)}
         AND region = ${str(key.region)} AND ts >= ${int(from)} AND ts < ${int(to)} AND (${rules.join(' OR ')})`,
    );
    return rows.map((r) => ({
      org_id: String(r.org_id),
      event_id: String(r.event_id),
      ts: Number(r.ts),
      received_at: Number(r.received_at),
      service: String(r.service),
      environment: String(r.environment),
      metric: String(r.metric),
      value: Number(r.value),
      region: String(r.region),
    }));
  }

  /** Minutes in which one destination received at least `bytes`, aggregated from the raw flows. */
  async destinationMinutes(orgId: string, dstIp: string, bytes: number, from: number, to: number): Promise<DestinationMinute[]> {
    const d = this.ch.dialect;
    const rows = await this.ch.query<{ minute_ms: string; bytes: string }>(
      `SELECT ${d.bucketMs('minute')} AS minute_ms, bytes FROM (
         SELECT ${d.bucketOf('ts', 60)} AS minute, sum(bytes) AS bytes FROM ${this.db}.flows
         WHERE org_id = ${str(orgId)} AND ts >= ${d.timeLiteral(Math.floor(from / 60_000) * 60_000)} AND ts < ${d.timeLiteral(to)}
           AND dst_ip = ${d.addressLiteral(dstIp)}
         GROUP BY minute HAVING bytes >= ${int(bytes)})`,
    );
    return rows.map((r) => ({ org_id: orgId, dst_ip: dstIp, minute: Number(r.minute_ms), bytes: Number(r.bytes) }));
  }

  /** Minutes in which one exporter's flows to one destination reached that exporter's threshold, from the raw flows. */
  exporterDestinationMinutes(orgId: string, dstIp: string, thresholds: Readonly<Record<string, number>>, from: number, to: number): Promise<DestinationMinute[]> {
    return exporterDestinationMinutes(this.ch, orgId, { from, to: to - 1, thresholds, dstIp });
  }

  /** The sources that sent the most to the given destinations within the window, and the totals examined. */
  /**
   * The stored flows towards a destination range in the window, in event-time order, as the rate
   * detectors read them: at most `limit` (one more tells the caller the window held more).
   */
  async rateFlows(orgId: string, range: { first: string; last: string }, from: number, to: number, limit: number): Promise<RateFlow[]> {
    const d = this.ch.dialect;
    const rows = await this.ch.query<Record<string, string | number>>(
      `SELECT ${d.msOf('ts')} AS t, ${d.addressText('src_ip')} AS src, ${d.addressText('dst_ip')} AS dst, src_port, dst_port, protocol, bytes, packets, tcp_flags,
              ${d.addressText('exporter')} AS exp, in_if, out_if
       FROM ${this.db}.flows
       WHERE org_id = ${str(orgId)} AND ts >= ${d.timeLiteral(from)} AND ts < ${d.timeLiteral(to)} AND ${d.addressInRange('dst_ip', range.first, range.last)}
       ORDER BY ts, event_id LIMIT ${int(limit + 1)}`,
    );
    return rows.map((r) => ({
      ts: Number(r.t), src_ip: String(r.src), dst_ip: String(r.dst), src_port: Number(r.src_port), dst_port: Number(r.dst_port), protocol: String(r.protocol),
      bytes: Number(r.bytes), packets: Number(r.packets), tcp_flags: Number(r.tcp_flags), exporter: String(r.exp), in_if: Number(r.in_if), out_if: Number(r.out_if),
    }));
  }

  async topSources(orgId: string, dstIps: string[], from: number, to: number, limit: number) {
    if (dstIps.length === 0) return { flows: 0, bytes: 0, top: [] };
    const d = this.ch.dialect;
    const addresses = `(${dstIps.map((ip) => d.addressLiteral(ip)).join(', ')})`;
    const where = `org_id = ${str(orgId)} AND ts >= ${d.timeLiteral(from)} AND ts < ${d.timeLiteral(to)} AND dst_ip IN ${addresses}`;
    const [totals, top] = await Promise.all([
      this.ch.query<{ flows: string; bytes: string }>(`SELECT count() AS flows, sum(bytes) AS bytes FROM ${this.db}.flows WHERE ${where}`),
      this.ch.query<{ src_ip: string; dst_ip: string; bytes: string; flows: string }>(
        `SELECT ${d.addressText('src')} AS src_ip, ${d.addressText('dst')} AS dst_ip, bytes, flows FROM (
           SELECT src_ip AS src, dst_ip AS dst, sum(bytes) AS bytes, count() AS flows FROM ${this.db}.flows WHERE ${where}
           GROUP BY src, dst ORDER BY bytes DESC, src ASC LIMIT ${int(limit)})
         ORDER BY bytes DESC, src ASC`,
      ),
    ]);
    return {
      flows: Number(totals[0]?.flows ?? 0),
      bytes: Number(totals[0]?.bytes ?? 0),
      top: top.map((r) => ({ src_ip: r.src_ip, dst_ip: r.dst_ip, bytes: Number(r.bytes), flows: Number(r.flows) })),
    };
  }
}
