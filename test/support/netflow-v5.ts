/**
 * Hand-made datagrams for the collector's bad-input tests: NetFlow v5 (whose
 * fixed layout needs no template) and NetFlow v9 sets that break the rules
 * on purpose. The tests of real exporters use real exporters instead.
 */
export interface V5Record {
  src: string;
  dst: string;
  bytes: number;
  packets: number;
  protocol: number;
  srcPort: number;
  dstPort: number;
}

const ipv4 = (text: string) => text.split('.').reduce((n, octet) => n * 256 + Number(octet), 0);

/** A NetFlow v5 datagram: 24-byte header, 48 bytes a record; `samplingRate` in the header's interval field. */
export function netflowV5(records: V5Record[], opts: { sequence?: number; samplingRate?: number } = {}): Buffer {
  const b = Buffer.alloc(24 + 48 * records.length);
  const now = Date.now();
  b.writeUInt16BE(5, 0);
  b.writeUInt16BE(records.length, 2);
  b.writeUInt32BE(100_000, 4); // uptime, ms
  b.writeUInt32BE(Math.floor(now / 1000), 8);
  b.writeUInt32BE(opts.sequence ?? 0, 16);
  b.writeUInt16BE((opts.samplingRate ?? 0) & 0x3fff, 22);
  records.forEach((r, i) => {
    const o = 24 + 48 * i;
    b.writeUInt32BE(ipv4(r.src), o);
    b.writeUInt32BE(ipv4(r.dst), o + 4);
    b.writeUInt32BE(r.packets, o + 16);
    b.writeUInt32BE(r.bytes, o + 20);
    b.writeUInt32BE(99_000, o + 24); // first, uptime ms
    b.writeUInt32BE(99_500, o + 28); // last
    b.writeUInt16BE(r.srcPort, o + 32);
    b.writeUInt16BE(r.dstPort, o + 34);
    b.writeUInt8(r.protocol, o + 38);
  });
  return b;
}

function v9Header(flowsets: Buffer[]): Buffer {
  const h = Buffer.alloc(20);
  h.writeUInt16BE(9, 0);
  h.writeUInt16BE(flowsets.length, 2);
  h.writeUInt32BE(100_000, 4);
  h.writeUInt32BE(Math.floor(Date.now() / 1000), 8);
  return Buffer.concat([h, ...flowsets]);
}

/** A NetFlow v9 data set for a template id no one sent: GoFlow2 cannot read it. */
export function netflowV9UnknownTemplate(templateId: number): Buffer {
  const set = Buffer.alloc(4 + 12);
  set.writeUInt16BE(templateId, 0);
  set.writeUInt16BE(set.length, 2);
  return v9Header([set]);
}

/** A NetFlow v9 datagram of `count` template records with ids from `firstId` (a flood of templates). */
export function netflowV9Templates(firstId: number, count: number): Buffer {
  const records = Array.from({ length: count }, (_, i) => {
    const r = Buffer.alloc(4 + 4 * 2);
    r.writeUInt16BE(firstId + i, 0);
    r.writeUInt16BE(2, 2); // two fields: IN_BYTES (1, 4 bytes), IN_PKTS (2, 4 bytes)
    r.writeUInt16BE(1, 4);
    r.writeUInt16BE(4, 6);
    r.writeUInt16BE(2, 8);
    r.writeUInt16BE(4, 10);
    return r;
  });
  const body = Buffer.concat(records);
  const head = Buffer.alloc(4);
  head.writeUInt16BE(0, 0);
  head.writeUInt16BE(4 + body.length, 2);
  return v9Header([Buffer.concat([head, body])]);
}
