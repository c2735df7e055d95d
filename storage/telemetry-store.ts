import type { DestinationMinute } from '../core/detectors';
import { newWriteId, recordEventIdLength, requestPrefixLength } from '../core/ids';
import { withLeadingField } from '../core/json-lines';
import type { SignalRow, TelemetryKind } from '../core/telemetry';
import type { ClickHouse } from './clickhouse';
import { flowWriteQueryId, RollupRepair, type RollupRepairOutcome } from './rollup-repair';
import { int, str, strList } from './sql';

export type TelemetryTable = 'flows' | 'signals' | 'metrics';

export interface KeyOfSignal {
  service: string;
  environment: string;
  region: string;
}

/** A signal row as ClickHouse answers it (64-bit integers as strings). */
export function signalFromRow(r: Record<string, unknown>): SignalRow {
  return {
    org_id: String(r.org_id),
    event_id: String(r.event_id),
    ts: Number(r.ts),
    received_at: Number(r.received_at),
    telemetry: r.telemetry as TelemetryKind,
    service: String(r.service),
    environment: String(r.environment),
    region: String(r.region),
    asn: Number(r.asn),
    src_ip: String(r.src_ip),
    dst_ip: String(r.dst_ip),
    dst_port: Number(r.dst_port),
    bytes: Number(r.bytes),
    latency_ms: Number(r.latency_ms),
    rule: String(r.rule),
  };
}

const idsPerQuery = 2_000;
/** The write that stored a row, as text: flows keep it (storage/rollup-repair.ts), other tables do not. */
const writeIdOf = (table: TelemetryTable) => (table === 'flows' ? 'toString(write_id)' : "'0'");
/** Request prefixes (24 bytes each, quoted) per counts query: about 120 KiB, within max_query_size (256 KiB) with the time ranges. */
const prefixesPerQuery = 5_000;

/** What a table holds of one event id prefix: how many distinct ids, the lowest and the highest, and (flows) the writes that stored them. */
export interface StoredPrefix {
  ids: number;
  lo: string;
  hi: string;
  writes: string[];
}

/** Each stored event id and the write that stored it ('0' where the table keeps no write ids). */
export type StoredIds = Map<string, string>;

export const signalColumns =
  'org_id, event_id, ts, received_at, telemetry, service, environment, region, asn, src_ip, dst_ip, dst_port, bytes, latency_ms, rule';

/** The stream workers' reads and writes of raw telemetry. */
export class TelemetryStore {
  private readonly rollups: RollupRepair;

  constructor(private readonly ch: ClickHouse) {
    this.rollups = new RollupRepair(ch);
  }

  /**
   * Flows are written under a fresh write id, on every row and as the query
   * id, which the rollups' receipts and their repair go by (completeRollups).
   */
  insert(table: TelemetryTable, ndjson: Buffer | string): Promise<void> {
    if (table !== 'flows') return this.ch.insertJsonEachRow(table, ndjson);
    const writeId = newWriteId();
    const rows = withLeadingField(typeof ndjson === 'string' ? Buffer.from(ndjson) : ndjson, `"write_id":${writeId}`);
    return this.ch.insertJsonEachRow(table, rows, { queryId: flowWriteQueryId(writeId) });
  }

  /** Gives the flow rollups the writes they lack among these (writes whose flows are stored): see storage/rollup-repair.ts. */
  completeRollups(writeIds: readonly string[]): Promise<RollupRepairOutcome[]> {
    return this.rollups.complete(writeIds);
  }

  /**
   * Which of these event ids a table already holds; the time range keeps the
   * scan on the primary key. Ids go in chunks, so no query outgrows
   * ClickHouse's max_query_size (256 KiB) whatever the message size.
   */
  async existingEventIds(table: TelemetryTable, orgId: string, minTs: number, maxTs: number, ids: string[]): Promise<StoredIds> {
    const found: StoredIds = new Map();
    const time = this.timeOf(table);
    for (let i = 0; i < ids.length; i += idsPerQuery) {
      const rows = await this.ch.query<{ event_id: string; w: string }>(
        `SELECT event_id, ${writeIdOf(table)} AS w FROM ${this.ch.database}.${table}
         WHERE org_id = ${str(orgId)} AND ts >= ${time(minTs)} AND ts <= ${time(maxTs)} AND event_id IN ${strList(ids.slice(i, i + idsPerQuery))}`,
      );
      for (const r of rows) found.set(r.event_id, r.w);
    }
    return found;
  }

  /**
   * What a table holds of each of these request prefixes of record event ids
   * (`requestPrefixOf` in core/ids.ts), within any of the time ranges: one
   * query scans the ranges once for a whole batch, where existingEventIds
   * scans them once per chunk of ids. Prefixes the table lacks are absent
   * from the answer; ids of another length are not counted.
   */
  async storedPrefixes(table: TelemetryTable, orgId: string, ranges: ReadonlyArray<readonly [number, number]>, prefixes: string[]): Promise<Map<string, StoredPrefix>> {
    const found = new Map<string, StoredPrefix>();
    if (ranges.length === 0) return found;
    const time = this.timeOf(table);
    const within = ranges.map(([from, to]) => `(ts >= ${time(from)} AND ts <= ${time(to)})`).join(' OR ');
    const prefix = `substring(event_id, 1, ${requestPrefixLength})`;
    for (let i = 0; i < prefixes.length; i += prefixesPerQuery) {
      const rows = await this.ch.query<{ p: string; ids: string; lo: string; hi: string; writes: string[] }>(
        `SELECT ${prefix} AS p, uniqExact(event_id) AS ids, min(event_id) AS lo, max(event_id) AS hi, groupUniqArray(${writeIdOf(table)}) AS writes
         FROM ${this.ch.database}.${table}
         WHERE org_id = ${str(orgId)} AND (${within}) AND length(event_id) = ${recordEventIdLength}
           AND ${prefix} IN ${strList(prefixes.slice(i, i + prefixesPerQuery))}
         GROUP BY p`,
      );
      for (const r of rows) found.set(r.p, { ids: Number(r.ids), lo: r.lo, hi: r.hi, writes: r.writes });
    }
    return found;
  }

  /** Flows keep the generation's time type; signals and metric events keep epoch ms. */
  private timeOf(table: TelemetryTable): (ms: number) => string {
    const dialect = this.ch.dialect;
    return (ms: number) => (table === 'flows' ? dialect.timeLiteral(ms) : int(ms));
  }

  /** Destinations whose bytes within one minute reached the threshold, from the 1-minute rollup. */
  async destinationMinutesOver(orgId: string, fromTs: number, toTs: number, bytes: number): Promise<DestinationMinute[]> {
    const d = this.ch.dialect;
    const rows = await this.ch.query<{ dst: string; minute_ms: string; bytes: string }>(
      `SELECT ${d.addressText('dst_ip')} AS dst, ${d.bucketMs('minute')} AS minute_ms, sum(bytes) AS bytes FROM ${this.ch.database}.flows_1m
       WHERE org_id = ${str(orgId)} AND minute >= ${d.bucketLiteral(Math.floor(fromTs / 60_000) * 60_000)} AND minute <= ${d.bucketLiteral(toTs)}
       GROUP BY dst_ip, minute HAVING bytes >= ${int(bytes)}`,
    );
    return rows.map((r) => ({ org_id: orgId, dst_ip: r.dst, minute: Number(r.minute_ms), bytes: Number(r.bytes) }));
  }

  /** Destinations whose bytes within one minute, in one exporter's flows, reached that exporter's threshold. */
  exporterDestinationMinutesOver(orgId: string, fromTs: number, toTs: number, thresholds: Readonly<Record<string, number>>): Promise<DestinationMinute[]> {
    return exporterDestinationMinutes(this.ch, orgId, { from: fromTs, to: toTs, thresholds });
  }

}

/**
 * Minutes in which one exporter's flows to one destination reached the
 * lowest of the given exporters' thresholds (the detector judges each
 * against its own), from the raw flows: the rollups keep no exporter. The
 * window covers the whole minutes `from` and `to` fall in.
 */
export async function exporterDestinationMinutes(
  ch: ClickHouse,
  orgId: string,
  q: { from: number; to: number; thresholds: Readonly<Record<string, number>>; dstIp?: string },
): Promise<DestinationMinute[]> {
  const exporters = Object.keys(q.thresholds);
  if (exporters.length === 0) return [];
  const d = ch.dialect;
  const lowest = Math.min(...Object.values(q.thresholds));
  const destination = q.dstIp === undefined ? '' : `AND dst_ip = ${d.addressLiteral(q.dstIp)}`;
  const rows = await ch.query<{ exp: string; dst: string; minute_ms: string; bytes: string }>(
    `SELECT ${d.addressText('exporter_address')} AS exp, ${d.addressText('dst_address')} AS dst, ${d.bucketMs('minute')} AS minute_ms, bytes FROM (
       SELECT exporter AS exporter_address, dst_ip AS dst_address, ${d.bucketOf('ts', 60)} AS minute, sum(bytes) AS bytes FROM ${ch.database}.flows
       WHERE org_id = ${str(orgId)} AND ts >= ${d.timeLiteral(Math.floor(q.from / 60_000) * 60_000)}
         AND ts < ${d.timeLiteral(Math.floor(q.to / 60_000) * 60_000 + 60_000)} ${destination}
         AND exporter IN (${exporters.map((e) => d.addressLiteral(e)).join(', ')})
       GROUP BY exporter_address, dst_address, minute HAVING bytes >= ${int(lowest)})`,
  );
  return rows.map((r) => ({ org_id: orgId, dst_ip: r.dst, minute: Number(r.minute_ms), bytes: Number(r.bytes), exporter: r.exp }));
}
