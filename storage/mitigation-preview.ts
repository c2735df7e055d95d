import { judgesPackets, type PreviewFilter } from '../core/automation-plan';
import type { RateFlow } from '../core/detection/traffic-class';
import type { ClickHouse } from './clickhouse';
import { int, str, strList } from './sql';

/** What an action would have matched in a window of stored flows towards one destination. */
export interface PreviewVolumes {
  destinationBytes: number;
  matchedBytes: number;
  matchedPackets: number;
  /** Matched flows of more than one packet, counted only when the filter judges packets (flags, length). */
  matchedMultiPacketFlows: number;
  /** The heaviest matched sources, heaviest first. */
  topSources: Array<{ src_ip: string; bytes: number }>;
}

/**
 * Reads the stored flows of a workspace towards a destination in
 * [from, to): all of them, and those an action's filter matches, with the
 * heaviest matched sources. Two aggregations on the raw flows, whose sorting
 * key starts with the workspace and the time.
 */
export async function previewVolumes(ch: ClickHouse, orgId: string, filter: PreviewFilter, window: { from: number; to: number }, top = 10): Promise<PreviewVolumes> {
  const d = ch.dialect;
  const scope = [
    `org_id = ${str(orgId)}`,
    `ts >= ${d.timeLiteral(window.from)}`,
    `ts < ${d.timeLiteral(window.to)}`,
    d.addressInRange('dst_ip', filter.first, filter.last),
  ].join(' AND ');
  const narrowing = [
    filter.protocols.length ? `protocol IN ${strList(filter.protocols)}` : '',
    filter.sourcePorts.length ? `src_port IN (${filter.sourcePorts.map(int).join(', ')})` : '',
    filter.destinationPorts.length ? `dst_port IN (${filter.destinationPorts.map(int).join(', ')})` : '',
    filter.tcpFlagBits ? `bitAnd(tcp_flags, ${int(filter.tcpFlagBits)}) = ${int(filter.tcpFlagBits)}` : '',
    // The mean packet size within the range, without a division: min × packets ≤ bytes ≤ max × packets.
    filter.packetLength ? `packets > 0 AND bytes >= packets * ${int(filter.packetLength.min)} AND bytes <= packets * ${int(filter.packetLength.max)}` : '',
  ].filter(Boolean);
  const matched = narrowing.length ? narrowing.join(' AND ') : '1';
  const multiPacket = judgesPackets(filter) ? `countIf(${matched} AND packets > 1)` : '0';
  const [totals, sources] = await Promise.all([
    ch.query<{ b: string | number; mb: string | number; mp: string | number; mf: string | number }>(
      `SELECT sum(bytes) AS b, sumIf(bytes, ${matched}) AS mb, sumIf(packets, ${matched}) AS mp, ${multiPacket} AS mf FROM ${ch.database}.flows WHERE ${scope}`,
    ),
    ch.query<{ src: string; b: string | number }>(
      `SELECT ${d.addressText('src_ip')} AS src, sum(bytes) AS b FROM ${ch.database}.flows WHERE ${scope} AND ${matched}
       GROUP BY src ORDER BY b DESC, src LIMIT ${int(top)}`,
    ),
  ]);
  const t = totals[0];
  return {
    destinationBytes: Number(t?.b ?? 0),
    matchedBytes: Number(t?.mb ?? 0),
    matchedPackets: Number(t?.mp ?? 0),
    matchedMultiPacketFlows: Number(t?.mf ?? 0),
    topSources: sources.map((s) => ({ src_ip: String(s.src), bytes: Number(s.b) })),
  };
}

/**
 * The stored flows of a workspace towards a destination in [from, to),
 * folded by what a Flowspec rule can match (protocol, ports, TCP flags, mean
 * packet size), for the fingerprint of an attack: at most `limit` shapes, the
 * most packets first (ties in a fixed order, so the same flows give the same
 * shapes). Each shape is one flow of its summed bytes and packets, with no
 * addresses (a fingerprint matches none but the destination's).
 */
export async function flowShapes(ch: ClickHouse, orgId: string, range: { first: string; last: string }, window: { from: number; to: number }, limit = 100_000): Promise<RateFlow[]> {
  const d = ch.dialect;
  const rows = await ch.query<{ protocol: string; sp: string | number; dp: string | number; f: string | number; b: string | number; p: string | number }>(
    `SELECT protocol, src_port AS sp, dst_port AS dp, tcp_flags AS f, intDiv(bytes, packets) AS size, sum(bytes) AS b, sum(packets) AS p
     FROM ${ch.database}.flows
     WHERE org_id = ${str(orgId)} AND ts >= ${d.timeLiteral(window.from)} AND ts < ${d.timeLiteral(window.to)} AND ${d.addressInRange('dst_ip', range.first, range.last)} AND packets > 0
     GROUP BY protocol, sp, dp, f, size ORDER BY p DESC, protocol, sp, dp, f, size LIMIT ${int(limit)}`,
  );
  return rows.map((r) => ({
    ts: window.from, src_ip: '', dst_ip: '', protocol: String(r.protocol),
    src_port: Number(r.sp), dst_port: Number(r.dp), tcp_flags: Number(r.f), bytes: Number(r.b), packets: Number(r.p),
  }));
}
