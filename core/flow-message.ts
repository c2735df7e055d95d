import { normalizeAddress } from './exporter';
import type { FlowInput } from './flow';
import { earliestTimestamp, latestTimestamp } from './telemetry';

/**
 * GoFlow2's FlowMessage (its pb/flow.proto, v2.2.6), the fields this service
 * stores. Field numbers are GoFlow2's; times are nanoseconds since the epoch.
 */
export interface CollectedFlow {
  /** 1 sFlow 5, 2 NetFlow v5, 3 NetFlow v9, 4 IPFIX. */
  type: number;
  timeReceivedNs: number;
  samplingRate: number;
  /** The exporter: the datagram's source address (IPv4 as 4 bytes, IPv6 as 16). */
  samplerAddress?: Uint8Array;
  timeFlowStartNs: number;
  timeFlowEndNs: number;
  bytes: number;
  packets: number;
  srcAddr?: Uint8Array;
  dstAddr?: Uint8Array;
  proto: number;
  srcPort: number;
  dstPort: number;
  inIf: number;
  outIf: number;
  ipTos: number;
  tcpFlags: number;
  srcAs: number;
  dstAs: number;
}

export const flowMessageFields = {
  type: 1,
  samplingRate: 3,
  srcAddr: 6,
  dstAddr: 7,
  bytes: 9,
  packets: 10,
  samplerAddress: 11,
  srcAs: 14,
  dstAs: 15,
  inIf: 18,
  outIf: 19,
  proto: 20,
  srcPort: 21,
  dstPort: 22,
  ipTos: 23,
  tcpFlags: 26,
  timeReceivedNs: 110,
  timeFlowStartNs: 111,
  timeFlowEndNs: 112,
} as const;

/** IANA protocol numbers as the lower-case keywords flows posted over HTTP use; others stay numbers. */
const protocolNames: Record<number, string> = { 1: 'icmp', 2: 'igmp', 6: 'tcp', 17: 'udp', 47: 'gre', 50: 'esp', 51: 'ah', 58: 'ipv6-icmp', 132: 'sctp' };
export const protocolName = (proto: number): string => protocolNames[proto] ?? String(proto);

/** Address bytes as the one text form (core/exporter.ts normalizeAddress); undefined when not an address. */
export function addressText(bytes: Uint8Array | undefined): string | undefined {
  if (!bytes) return undefined;
  if (bytes.length === 4) return `${bytes[0]}.${bytes[1]}.${bytes[2]}.${bytes[3]}`;
  if (bytes.length !== 16) return undefined;
  const groups: string[] = [];
  for (let i = 0; i < 16; i += 2) groups.push(((bytes[i]! << 8) | bytes[i + 1]!).toString(16));
  return normalizeAddress(groups.join(':'));
}

/** A flow's own start or end, kept only when it is a plausible time (some exporters' uptime arithmetic wraps). */
function plausibleMs(ns: number): number | undefined {
  const ms = Math.floor(ns / 1e6);
  return ms >= earliestTimestamp && ms <= latestTimestamp() ? ms : undefined;
}

/** Why a collected flow was not stored: counted by reason, never written. */
export type CollectedFlowFault = 'no_address' | 'empty_flow' | 'bad_time';

const unspecified = new Set(['0.0.0.0', '::']);

/**
 * A collected flow as the same input an HTTP flow is, under the sampling rule
 * (core/flow.ts): the rate is the workspace's registered rate for the
 * exporter when set, else the rate the exporter reported; the event time is
 * when the collector received the datagram, as exporters' clocks and uptime
 * arithmetic cannot be trusted.
 */
export function toFlowInput(m: CollectedFlow, exporter: string, registeredRate: number): FlowInput | CollectedFlowFault {
  const src = addressText(m.srcAddr);
  const dst = addressText(m.dstAddr);
  // A decoder fills what a truncated record lacks with zeros: such a record counts nothing and is no flow.
  if (!src || !dst || (unspecified.has(src) && unspecified.has(dst))) return 'no_address';
  if (m.bytes === 0 && m.packets === 0) return 'empty_flow';
  const received = Math.floor(m.timeReceivedNs / 1e6);
  if (!(received >= earliestTimestamp && received <= latestTimestamp())) return 'bad_time';
  const rate = registeredRate > 0 ? registeredRate : m.samplingRate > 0 ? m.samplingRate : undefined;
  return {
    src_ip: src,
    dst_ip: dst,
    bytes: Math.min(m.bytes, Number.MAX_SAFE_INTEGER),
    packets: Math.min(m.packets, Number.MAX_SAFE_INTEGER),
    protocol: protocolName(m.proto),
    src_port: m.srcPort & 0xffff,
    dst_port: m.dstPort & 0xffff,
    timestamp: received,
    exporter,
    // Zero is what the columns default to: left out, the stored line is about a third shorter.
    in_if: m.inIf || undefined,
    out_if: m.outIf || undefined,
    src_as: m.srcAs || undefined,
    dst_as: m.dstAs || undefined,
    tcp_flags: m.tcpFlags & 0xffff || undefined,
    tos: m.ipTos & 0xff || undefined,
    flow_start: plausibleMs(m.timeFlowStartNs),
    flow_end: plausibleMs(m.timeFlowEndNs),
    sampling_rate: rate,
  };
}
