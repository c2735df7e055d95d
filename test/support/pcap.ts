import { writeFileSync } from 'node:fs';
import { isIPv4, isIPv6 } from 'node:net';

/**
 * Classic pcap files (LINKTYPE_ETHERNET, microsecond timestamps) of known
 * packets, so real flow exporters (softflowd, pmacctd, nfpcapd) can be fed
 * traffic whose totals the test knows in advance.
 */

export interface PcapFlow {
  src: string;
  dst: string;
  protocol: 'tcp' | 'udp' | 'icmp';
  /** Ignored for ICMP (an echo request is sent). */
  srcPort?: number;
  dstPort?: number;
  packets: number;
  /** Transport payload of every packet of the flow. */
  payloadBytes: number;
  /** Informative: the address family follows from `src` and `dst`. */
  ipv6?: boolean;
}

/**
 * What a NetFlow/IPFIX exporter reports for one flow: IP bytes, IP header
 * included, Ethernet excluded. sFlow samples count whole frames instead:
 * pmacct's sfprobe reports bytes + 18 per packet (Ethernet header and FCS).
 */
export interface ExpectedFlow {
  src_ip: string;
  dst_ip: string;
  protocol: 'tcp' | 'udp' | 'icmp' | 'ipv6-icmp';
  /** IANA protocol number, as carried in NetFlow/IPFIX/sFlow. */
  proto: number;
  /** 0 for ICMP: exporters differ on where they put type and code. */
  src_port: number;
  dst_port: number;
  /** Sum of the IP total lengths (IPv6: 40-byte header + payload length). */
  bytes: number;
  packets: number;
  /** OR of the TCP flags of every packet; 0 for UDP and ICMP. */
  tcp_flags: number;
  first_ms: number;
  last_ms: number;
}

export const TCP_FIN = 0x01;
export const TCP_SYN = 0x02;
export const TCP_PSH = 0x08;
export const TCP_ACK = 0x10;

const ETHERTYPE_IPV4 = 0x0800;
const ETHERTYPE_IPV6 = 0x86dd;
const SRC_MAC = Buffer.from('020000000001', 'hex');
const DST_MAC = Buffer.from('020000000002', 'hex');

/** Writes `file` and returns, flow by flow, the totals an exporter should report. */
export function writePcap(file: string, flows: PcapFlow[], opts: { startMs?: number } = {}): ExpectedFlow[] {
  const total = flows.reduce((n, f) => n + f.packets, 0);
  // Packets are 1 ms apart and end about a second before now, so exporters that keep packet times report recent ones.
  let clockMs = Math.floor(opts.startMs ?? Date.now() - total - 1_000);
  const records: Buffer[] = [globalHeader()];
  const expected = flows.map((flow) => {
    const first = clockMs;
    let bytes = 0;
    let flags = 0;
    for (let i = 0; i < flow.packets; i += 1) {
      const tcpFlags = tcpFlagsOf(i, flow.packets);
      const ip = ipPacket(flow, tcpFlags);
      bytes += ip.length;
      flags |= tcpFlags;
      records.push(recordHeader(clockMs, ip.length + 14), ethernet(isIPv6(flow.src)), ip);
      clockMs += 1;
    }
    return expectation(flow, bytes, flow.protocol === 'tcp' ? flags : 0, first, clockMs - 1);
  });
  writeFileSync(file, Buffer.concat(records));
  return expected;
}

function expectation(flow: PcapFlow, bytes: number, tcpFlags: number, first: number, last: number): ExpectedFlow {
  const v6 = isIPv6(flow.src);
  const icmp = flow.protocol === 'icmp';
  return {
    src_ip: canonical(flow.src),
    dst_ip: canonical(flow.dst),
    protocol: icmp && v6 ? 'ipv6-icmp' : flow.protocol,
    proto: protocolNumber(flow.protocol, v6),
    src_port: icmp ? 0 : (flow.srcPort ?? 0),
    dst_port: icmp ? 0 : (flow.dstPort ?? 0),
    bytes,
    packets: flow.packets,
    tcp_flags: tcpFlags,
    first_ms: first,
    last_ms: last,
  };
}

/**
 * What a deterministic 1-in-`every` sampler reports (softflowd -s: packets 0,
 * every, 2·every… of those it tracks, counts not scaled up). `expected` must
 * hold, in file order, exactly the flows whose packets the exporter counts:
 * softflowd -v 5 drops IPv6 packets before sampling, so leave those out.
 */
export function periodicSample(expected: ExpectedFlow[], every: number): ExpectedFlow[] {
  let index = 0;
  const sampled: ExpectedFlow[] = [];
  for (const flow of expected) {
    const size = flow.bytes / flow.packets;
    let packets = 0;
    let flags = 0;
    let first = -1;
    let last = -1;
    for (let i = 0; i < flow.packets; i += 1, index += 1) {
      if (index % every !== 0) continue;
      packets += 1;
      if (flow.tcp_flags) flags |= tcpFlagsOf(i, flow.packets);
      if (first < 0) first = flow.first_ms + i;
      last = flow.first_ms + i;
    }
    if (packets) sampled.push({ ...flow, bytes: packets * size, packets, tcp_flags: flags, first_ms: first, last_ms: last });
  }
  return sampled;
}

/** SYN opens the flow, FIN|ACK closes it (when there are two packets or more), ACK|PSH carries the rest. */
function tcpFlagsOf(index: number, count: number): number {
  if (index === 0) return TCP_SYN;
  if (index === count - 1) return TCP_FIN | TCP_ACK;
  return TCP_ACK | TCP_PSH;
}

function protocolNumber(protocol: PcapFlow['protocol'], v6: boolean): number {
  if (protocol === 'tcp') return 6;
  if (protocol === 'udp') return 17;
  return v6 ? 58 : 1;
}

function globalHeader(): Buffer {
  const b = Buffer.alloc(24);
  b.writeUInt32LE(0xa1b2c3d4, 0); // microsecond timestamps
  b.writeUInt16LE(2, 4);
  b.writeUInt16LE(4, 6);
  b.writeUInt32LE(65535, 16); // snaplen
  b.writeUInt32LE(1, 20); // LINKTYPE_ETHERNET
  return b;
}

function recordHeader(timeMs: number, length: number): Buffer {
  const b = Buffer.alloc(16);
  b.writeUInt32LE(Math.floor(timeMs / 1000), 0);
  b.writeUInt32LE((timeMs % 1000) * 1000, 4);
  b.writeUInt32LE(length, 8);
  b.writeUInt32LE(length, 12);
  return b;
}

function ethernet(v6: boolean): Buffer {
  const b = Buffer.alloc(14);
  DST_MAC.copy(b, 0);
  SRC_MAC.copy(b, 6);
  b.writeUInt16BE(v6 ? ETHERTYPE_IPV6 : ETHERTYPE_IPV4, 12);
  return b;
}

function ipPacket(flow: PcapFlow, tcpFlags: number): Buffer {
  const v6 = isIPv6(flow.src);
  if (v6 !== isIPv6(flow.dst) || (!v6 && !(isIPv4(flow.src) && isIPv4(flow.dst)))) {
    throw new Error(`flow ${flow.src} -> ${flow.dst}: both addresses must be IPv4 or both IPv6`);
  }
  const src = addressBytes(flow.src);
  const dst = addressBytes(flow.dst);
  const proto = protocolNumber(flow.protocol, v6);
  const l4 = transport(flow, tcpFlags);
  // TCP, UDP and ICMPv6 checksums cover a pseudo-header; ICMPv4's covers the message only.
  const pseudo = proto === 1 ? Buffer.alloc(0) : pseudoHeader(src, dst, proto, l4.length);
  l4.writeUInt16BE(checksum(Buffer.concat([pseudo, l4])), checksumOffset(flow.protocol));
  return Buffer.concat([v6 ? ipv6Header(src, dst, proto, l4.length) : ipv4Header(src, dst, proto, l4.length), l4]);
}

function checksumOffset(protocol: PcapFlow['protocol']): number {
  if (protocol === 'tcp') return 16;
  if (protocol === 'udp') return 6;
  return 2;
}

/** TCP (20-byte header), UDP (8) or ICMP echo request (8), with a zeroed checksum and a zero-filled payload. */
function transport(flow: PcapFlow, tcpFlags: number): Buffer {
  const sport = flow.srcPort ?? 0;
  const dport = flow.dstPort ?? 0;
  if (flow.protocol === 'tcp') {
    const b = Buffer.alloc(20 + flow.payloadBytes);
    b.writeUInt16BE(sport, 0);
    b.writeUInt16BE(dport, 2);
    b.writeUInt32BE(1, 4); // sequence
    b.writeUInt8(5 << 4, 12); // data offset: 5 words
    b.writeUInt8(tcpFlags, 13);
    b.writeUInt16BE(65535, 14); // window
    return b;
  }
  if (flow.protocol === 'udp') {
    const b = Buffer.alloc(8 + flow.payloadBytes);
    b.writeUInt16BE(sport, 0);
    b.writeUInt16BE(dport, 2);
    b.writeUInt16BE(b.length, 4);
    return b;
  }
  const b = Buffer.alloc(8 + flow.payloadBytes);
  b.writeUInt8(isIPv6(flow.src) ? 128 : 8, 0); // echo request
  b.writeUInt16BE(1, 4); // identifier
  return b;
}

function ipv4Header(src: Buffer, dst: Buffer, proto: number, payload: number): Buffer {
  const b = Buffer.alloc(20);
  b.writeUInt8(0x45, 0);
  b.writeUInt16BE(20 + payload, 2);
  b.writeUInt16BE(0x4000, 6); // don't fragment
  b.writeUInt8(64, 8);
  b.writeUInt8(proto, 9);
  src.copy(b, 12);
  dst.copy(b, 16);
  b.writeUInt16BE(checksum(b), 10);
  return b;
}

function ipv6Header(src: Buffer, dst: Buffer, proto: number, payload: number): Buffer {
  const b = Buffer.alloc(40);
  b.writeUInt32BE(0x60000000, 0);
  b.writeUInt16BE(payload, 4);
  b.writeUInt8(proto, 6);
  b.writeUInt8(64, 7);
  src.copy(b, 8);
  dst.copy(b, 24);
  return b;
}

function pseudoHeader(src: Buffer, dst: Buffer, proto: number, length: number): Buffer {
  const tail = Buffer.alloc(src.length === 4 ? 4 : 8);
  if (src.length === 4) {
    tail.writeUInt8(proto, 1);
    tail.writeUInt16BE(length, 2);
  } else {
    tail.writeUInt32BE(length, 0);
    tail.writeUInt8(proto, 7);
  }
  return Buffer.concat([src, dst, tail]);
}

/** The Internet checksum (RFC 1071) of `b`, over a zero checksum field. */
function checksum(b: Buffer): number {
  let sum = 0;
  for (let i = 0; i < b.length; i += 2) sum += (b[i] ?? 0) * 256 + (b[i + 1] ?? 0);
  while (sum > 0xffff) sum = (sum & 0xffff) + (sum >>> 16);
  return ~sum & 0xffff;
}

function addressBytes(ip: string): Buffer {
  if (isIPv4(ip)) return Buffer.from(ip.split('.').map(Number));
  return Buffer.from(ipv6Groups(ip).flatMap((g) => [g >> 8, g & 0xff]));
}

/** The eight 16-bit groups of an IPv6 address (no embedded IPv4 form, which tests don't need). */
function ipv6Groups(ip: string): number[] {
  const [head = '', tail] = ip.split('::');
  const parse = (s: string): number[] => (s ? s.split(':').map((g) => parseInt(g, 16)) : []);
  const left = parse(head);
  const right = tail === undefined ? [] : parse(tail);
  return [...left, ...Array<number>(8 - left.length - right.length).fill(0), ...right];
}

/** RFC 5952 text of an address, as collectors (Go's net.IP among them) print it. */
export function canonical(ip: string): string {
  if (isIPv4(ip)) return ip;
  const groups = ipv6Groups(ip);
  let best = { at: -1, len: 1 };
  for (let i = 0; i < 8; i += 1) {
    let len = 0;
    while (groups[i + len] === 0) len += 1;
    if (len > best.len) best = { at: i, len };
  }
  const hex = groups.map((g) => g.toString(16));
  if (best.at < 0) return hex.join(':');
  return `${hex.slice(0, best.at).join(':')}::${hex.slice(best.at + best.len).join(':')}`;
}
