/**
 * NetFlow v9 and IPFIX datagrams for the collector scenario, encoded before
 * any is sent: one exporter per protocol, a template datagram first and
 * again every `templateEvery` datagrams (as real exporters refresh theirs),
 * then data datagrams of 28 (v9) or 26 (IPFIX) IPv4 flow records, with the
 * sequence numbers each protocol defines (v9: datagrams sent; IPFIX: data
 * records sent before this message).
 */
export type FlowProtocol = 'netflow9' | 'ipfix';

export interface BenchFlow {
  src: number;
  dst: number;
  srcPort: number;
  dstPort: number;
  proto: number;
  tcpFlags: number;
  bytes: number;
  packets: number;
  inIf: number;
  outIf: number;
  /** Epoch milliseconds. */
  startMs: number;
  endMs: number;
}

/** The collector's flows go to this /16 (a public one, so the databases answer for it too). */
export const benchDestinations = { network: ((185 << 24) | (40 << 16)) >>> 0, prefix: '185.40.0.0/16' };

/** A pseudo-random 32-bit number of `i` and `salt` (a multiply-xorshift hash): flows differ without a generator's state. */
function mix(i: number, salt: number): number {
  let x = Math.imul(i ^ salt, 0x9e3779b1) ^ (i >>> 15);
  x = Math.imul(x ^ (x >>> 13), 0x85ebca6b);
  return (x ^ (x >>> 16)) >>> 0;
}

/** A public unicast first octet (1-223 without 10 and 127): sources the AS and country databases answer for, as an exporter's would be. */
function publicOctet(x: number): number {
  const octet = 1 + (x % 223);
  return octet === 10 || octet === 127 ? octet + 1 : octet;
}

/**
 * The i-th flow of the bench, ending before `exportMs`: varied addresses,
 * ports, protocols and volumes. Background traffic, not an attack: sources
 * spread over the public IPv4 space, destinations over the 65,536 addresses
 * of one /16 (`benchDestinations`), 1-40 packets a flow, so that at the
 * highest rate offered (300,000 flows/s) every address and every /24 stays
 * far below the default rate thresholds (core/detection/rules.ts); the flood
 * scenario measures attacks.
 */
export function benchFlow(i: number, exportMs: number): BenchFlow {
  const r = mix(i, 0x5bd1e995);
  const kind = r % 20;
  const proto = kind < 14 ? 6 : kind < 19 ? 17 : 1;
  const packets = 1 + (mix(i, 7) % 40);
  const durationMs = mix(i, 11) % 60_000;
  const endMs = exportMs - 1_000 * (mix(i, 13) % 30) - (mix(i, 17) % 1_000);
  const services = [443, 80, 53, 22, 123, 8080, 3306, 5432];
  const s = mix(i, 3);
  return {
    src: ((publicOctet(s >>> 24) << 24) | (s & 0xffffff)) >>> 0,
    dst: (benchDestinations.network | (mix(i, 5) & 0xffff)) >>> 0,
    srcPort: proto === 1 ? 0 : 1024 + (mix(i, 19) % 64_000),
    dstPort: proto === 1 ? 0 : services[mix(i, 23) % services.length]!,
    proto,
    tcpFlags: proto === 6 ? 0x10 | (mix(i, 29) & 0x07) : 0,
    bytes: packets * (40 + (mix(i, 31) % 1_460)),
    packets,
    inIf: 1 + (r >>> 8) % 48,
    outIf: 1 + (r >>> 16) % 48,
    startMs: endMs - durationMs,
    endMs,
  };
}

type Put = (b: Buffer, at: number, f: BenchFlow, bootMs: number) => void;
interface Field { id: number; length: number; put: Put }

const u8 = (v: (f: BenchFlow) => number): Put => (b, at, f) => b.writeUInt8(v(f), at);
const u16 = (v: (f: BenchFlow) => number): Put => (b, at, f) => b.writeUInt16BE(v(f), at);
const u32 = (v: (f: BenchFlow) => number): Put => (b, at, f) => b.writeUInt32BE(v(f) >>> 0, at);
const u64 = (v: (f: BenchFlow) => number): Put => (b, at, f) => b.writeBigUInt64BE(BigInt(v(f)), at);

/** NetFlow v9 (RFC 3954): counters in 4 bytes, times as the exporter's uptime in ms at the flow's first and last packet. */
const v9Fields: Field[] = [
  { id: 1, length: 4, put: u32((f) => f.bytes) }, // IN_BYTES
  { id: 2, length: 4, put: u32((f) => f.packets) }, // IN_PKTS
  { id: 4, length: 1, put: u8((f) => f.proto) }, // PROTOCOL
  { id: 6, length: 1, put: u8((f) => f.tcpFlags) }, // TCP_FLAGS
  { id: 7, length: 2, put: u16((f) => f.srcPort) }, // L4_SRC_PORT
  { id: 8, length: 4, put: u32((f) => f.src) }, // IPV4_SRC_ADDR
  { id: 10, length: 2, put: u16((f) => f.inIf) }, // INPUT_SNMP
  { id: 11, length: 2, put: u16((f) => f.dstPort) }, // L4_DST_PORT
  { id: 12, length: 4, put: u32((f) => f.dst) }, // IPV4_DST_ADDR
  { id: 14, length: 2, put: u16((f) => f.outIf) }, // OUTPUT_SNMP
  { id: 22, length: 4, put: (b, at, f, boot) => b.writeUInt32BE(f.startMs - boot, at) }, // FIRST_SWITCHED
  { id: 21, length: 4, put: (b, at, f, boot) => b.writeUInt32BE(f.endMs - boot, at) }, // LAST_SWITCHED
];

/** IPFIX (RFC 7011, IANA elements): 8-byte delta counters, absolute start and end in ms. */
const ipfixFields: Field[] = [
  { id: 1, length: 8, put: u64((f) => f.bytes) }, // octetDeltaCount
  { id: 2, length: 8, put: u64((f) => f.packets) }, // packetDeltaCount
  { id: 4, length: 1, put: u8((f) => f.proto) }, // protocolIdentifier
  { id: 6, length: 1, put: u8((f) => f.tcpFlags) }, // tcpControlBits
  { id: 7, length: 2, put: u16((f) => f.srcPort) }, // sourceTransportPort
  { id: 8, length: 4, put: u32((f) => f.src) }, // sourceIPv4Address
  { id: 10, length: 4, put: u32((f) => f.inIf) }, // ingressInterface
  { id: 11, length: 2, put: u16((f) => f.dstPort) }, // destinationTransportPort
  { id: 12, length: 4, put: u32((f) => f.dst) }, // destinationIPv4Address
  { id: 14, length: 4, put: u32((f) => f.outIf) }, // egressInterface
  { id: 152, length: 8, put: u64((f) => f.startMs) }, // flowStartMilliseconds
  { id: 153, length: 8, put: u64((f) => f.endMs) }, // flowEndMilliseconds
];

const spec = {
  netflow9: { version: 9, header: 20, templateSetId: 0, templateId: 260, fields: v9Fields, records: 28 },
  ipfix: { version: 10, header: 16, templateSetId: 2, templateId: 261, fields: ipfixFields, records: 26 },
} as const;

/** Datagrams to send in order, and the data records in each (0 for a template datagram). */
export interface Datagrams {
  datagrams: Buffer[];
  flows: number[];
  total: number;
}

/**
 * One exporter of one protocol: its sequence numbers and template refresh
 * carry on from one `encode` call to the next, as one router's would.
 */
export class FlowExporter {
  private readonly spec;
  private readonly recordBytes: number;
  private datagramsSent = 0;
  private recordsSent = 0;
  private sinceTemplate = Infinity;

  constructor(
    readonly protocol: FlowProtocol,
    private readonly opts: { domainId: number; templateEvery: number; bootMs: number },
  ) {
    this.spec = spec[protocol];
    this.recordBytes = this.spec.fields.reduce((n, f) => n + f.length, 0);
  }

  get recordsPerDatagram(): number {
    return this.spec.records;
  }

  /** The flows first..first+count-1 (benchFlow) as datagrams exported at `exportMs` (whole seconds keep v9's times exact). */
  encode(first: number, count: number, exportMs: number, out: Datagrams = { datagrams: [], flows: [], total: 0 }): Datagrams {
    for (let i = first; i < first + count; i += this.spec.records) {
      if (this.sinceTemplate >= this.opts.templateEvery) {
        out.datagrams.push(this.template(exportMs));
        out.flows.push(0);
        this.sinceTemplate = 0;
      }
      const n = Math.min(this.spec.records, first + count - i);
      out.datagrams.push(this.data(i, n, exportMs));
      out.flows.push(n);
      out.total += n;
      this.sinceTemplate += 1;
    }
    return out;
  }

  /** The template alone, in its own datagram. */
  template(exportMs: number): Buffer {
    const { fields } = this.spec;
    const setBytes = 4 + 4 + 4 * fields.length;
    const b = this.header(setBytes, 1, exportMs);
    let at = this.spec.header;
    b.writeUInt16BE(this.spec.templateSetId, at);
    b.writeUInt16BE(setBytes, at + 2);
    b.writeUInt16BE(this.spec.templateId, at + 4);
    b.writeUInt16BE(fields.length, at + 6);
    at += 8;
    for (const f of fields) {
      b.writeUInt16BE(f.id, at);
      b.writeUInt16BE(f.length, at + 2);
      at += 4;
    }
    return b;
  }

  private data(first: number, n: number, exportMs: number): Buffer {
    const body = 4 + n * this.recordBytes;
    const setBytes = body + ((4 - (body % 4)) % 4);
    const b = this.header(setBytes, n, exportMs);
    let at = this.spec.header;
    b.writeUInt16BE(this.spec.templateId, at);
    b.writeUInt16BE(setBytes, at + 2);
    at += 4;
    for (let i = first; i < first + n; i += 1) {
      const flow = benchFlow(i, exportMs);
      for (const f of this.spec.fields) {
        f.put(b, at, flow, this.opts.bootMs);
        at += f.length;
      }
    }
    this.recordsSent += n;
    return b;
  }

  /** A datagram with its header written and room for one set of `setBytes`; counts the datagram. */
  private header(setBytes: number, records: number, exportMs: number): Buffer {
    const b = Buffer.alloc(this.spec.header + setBytes);
    const secs = Math.floor(exportMs / 1000);
    b.writeUInt16BE(this.spec.version, 0);
    if (this.protocol === 'netflow9') {
      b.writeUInt16BE(records, 2); // count: template and data records in this datagram
      b.writeUInt32BE(exportMs - this.opts.bootMs, 4); // sysUptime
      b.writeUInt32BE(secs, 8);
      b.writeUInt32BE(this.datagramsSent % 2 ** 32, 12);
      b.writeUInt32BE(this.opts.domainId, 16); // source id
    } else {
      b.writeUInt16BE(b.length, 2);
      b.writeUInt32BE(secs, 4);
      // Data records sent before this message; `data` counts this one's after the header is written.
      b.writeUInt32BE(this.recordsSent % 2 ** 32, 8);
      b.writeUInt32BE(this.opts.domainId, 12);
    }
    this.datagramsSent += 1;
    return b;
  }
}

/** Half the flows as NetFlow v9, half as IPFIX, their datagrams interleaved (each exporter's templates before its data). */
export function encodeMixed(v9: FlowExporter, ipfix: FlowExporter, first: number, flows: number, exportMs: number): Datagrams {
  const a = v9.encode(first, Math.ceil(flows / 2), exportMs);
  const b = ipfix.encode(first + Math.ceil(flows / 2), Math.floor(flows / 2), exportMs);
  const out: Datagrams = { datagrams: [], flows: [], total: a.total + b.total };
  const n = Math.max(a.datagrams.length, b.datagrams.length);
  for (let i = 0; i < n; i += 1) {
    for (const s of [a, b]) {
      if (i >= s.datagrams.length) continue;
      out.datagrams.push(s.datagrams[i]!);
      out.flows.push(s.flows[i]!);
    }
  }
  return out;
}
