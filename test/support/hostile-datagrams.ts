import { seededRandom } from './malformed';

/**
 * Datagrams built to hurt a flow collector, for the collector's fuzz test
 * (docs/security/goflow2.md says what each did to an unpatched GoFlow2):
 * templates whose records take no bytes, truncated headers, empty and
 * oversized templates, template floods, sFlow with absurd counts, and seeded
 * random bytes. None carries a flow a test expects to be stored.
 */

const u16 = (...values: number[]): Buffer => {
  const b = Buffer.alloc(2 * values.length);
  values.forEach((v, i) => b.writeUInt16BE(v, 2 * i));
  return b;
};

const u32 = (...values: number[]): Buffer => {
  const b = Buffer.alloc(4 * values.length);
  values.forEach((v, i) => b.writeUInt32BE(v >>> 0, 4 * i));
  return b;
};

/** A NetFlow v9 flowset or an IPFIX set: id, length (header included), body. */
const set = (id: number, body: Buffer): Buffer => Buffer.concat([u16(id, 4 + body.length), body]);

/** A NetFlow v9 datagram; the header counts its flowsets. */
const v9 = (flowsets: Buffer[], sourceId = 0): Buffer => Buffer.concat([u16(9, flowsets.length), u32(0, 0, 0, sourceId), ...flowsets]);

/** An IPFIX message; the header's length is the message's. */
function ipfix(sets: Buffer[], domain = 0): Buffer {
  const body = Buffer.concat(sets);
  return Buffer.concat([u16(10, 16 + body.length), u32(0, 0, domain), body]);
}

/**
 * 36 bytes: a NetFlow v9 template (id 256) whose one field is 0 bytes long,
 * then a data set for it. An unpatched GoFlow2 reads 0-byte records from the
 * empty set forever, growing about 250 MB a second.
 */
export function zeroLengthTemplateV9(): Buffer {
  return v9([set(0, u16(256, 1, 1, 0)), set(256, Buffer.alloc(0))]);
}

/** The other templates whose records take no bytes, each followed by a data set for it: IPFIX, no fields, options templates. */
export function zeroSizeTemplates(): Buffer[] {
  const data = (id: number) => set(id, Buffer.alloc(8));
  return [
    ipfix([set(2, u16(257, 1, 1, 0)), data(257)]),
    ipfix([set(2, u16(258, 0)), data(258)]), // no field: an IPFIX Template Withdrawal's shape
    v9([set(0, u16(259, 0)), data(259)]),
    v9([set(1, Buffer.concat([u16(260, 0, 0), Buffer.alloc(2)])), data(260)]), // options: no scope, no option
    v9([set(1, Buffer.concat([u16(261, 4, 4, 1, 0, 2, 0), Buffer.alloc(2)])), data(261)]), // options of 0-byte fields
    ipfix([set(3, Buffer.concat([u16(262, 0, 0), Buffer.alloc(2)])), data(262)]),
    ipfix([set(3, Buffer.concat([u16(263, 1, 1, 1, 0), Buffer.alloc(2)])), data(263)]),
  ];
}

/** Headers cut short or lying about their length, NetFlow v5, v9, IPFIX and sFlow, down to a 1-byte datagram. */
export function truncatedHeaders(): Buffer[] {
  const v5Header = Buffer.concat([u16(5, 1), Buffer.alloc(20)]);
  return [
    Buffer.from([0]),
    v5Header.subarray(0, 10),
    Buffer.concat([v5Header, Buffer.alloc(20)]), // one record claimed, 20 of its 48 bytes sent
    Buffer.concat([u16(5, 65535), Buffer.alloc(20)]), // 65535 records claimed, none sent
    v9([]).subarray(0, 12),
    v9([u16(300, 2)]), // a flowset shorter than its own header
    v9([Buffer.concat([u16(300, 1000), Buffer.alloc(8)])]), // a flowset longer than the datagram
    ipfix([]).subarray(0, 10),
    Buffer.concat([u16(10, 65535), u32(0, 0, 0), set(2, u16(300, 1, 1, 4))]), // an IPFIX length past the datagram
    Buffer.concat([u16(10, 4), u32(0, 0, 0), set(2, u16(300, 1, 1, 4))]), // an IPFIX length inside its header
    Buffer.concat([u32(5, 1), Buffer.from([10, 0])]),
    Buffer.concat([sflowHeader(1), u32(1, 0xffffffff)]), // a sample longer than the datagram
  ];
}

/** Template sets with no template, and templates claiming far more fields than their set holds. */
export function emptyTemplates(): Buffer[] {
  return [
    v9([set(0, Buffer.alloc(0))]),
    ipfix([set(2, Buffer.alloc(0))]),
    v9([set(1, Buffer.alloc(0))]),
    ipfix([set(3, Buffer.alloc(0))]),
    v9([set(0, u16(300, 65535))]),
    ipfix([set(2, u16(301, 65535))]),
    v9([set(1, Buffer.concat([u16(302, 65532, 65532), Buffer.alloc(2)]))]),
    ipfix([set(3, Buffer.concat([u16(303, 65535, 1), Buffer.alloc(2)]))]),
  ];
}

/**
 * `datagrams` NetFlow v9 datagrams of 180 templates each (ids 256 to 435, one
 * 4-byte field), each under a new observation domain from `firstDomain`: an
 * unpatched GoFlow2 keeps every one, and a metrics series for each.
 */
export function templateFlood(firstDomain: number, datagrams: number): Buffer[] {
  const records = Buffer.concat(Array.from({ length: 180 }, (_, i) => u16(256 + i, 1, 1, 4)));
  return Array.from({ length: datagrams }, (_, i) => v9([set(0, records)], firstDomain + i));
}

/** An sFlow v5 header from an IPv4 agent, announcing `samples` samples. */
function sflowHeader(samples: number, agent = 0x0a000001): Buffer {
  return u32(5, 1, agent, 0, 1, 1000, samples);
}

const sample = (format: number, body: Buffer): Buffer => Buffer.concat([u32(format, body.length), body]);
/** A flow sample (format 1) announcing `records` records, followed by `rest` (none by default). */
const flowSample = (records: number, rest: Buffer = Buffer.alloc(0)) => sample(1, Buffer.concat([u32(1, 0, 1, 100, 0, 1, 2, records), rest]));
/** An expanded flow sample (format 3) announcing `records` records, with none. */
const expandedFlowSample = (records: number) => sample(3, u32(1, 0, 1, 100, 100, 0, 0, 1, 0, 2, records));
/** A counter sample (format 2) announcing `records` records, with none. */
const counterSample = (records: number) => sample(2, u32(1, 0, records));

/**
 * sFlow datagrams whose counts are absurd: 2^32-1 samples, or samples
 * announcing 2^32-1 (or 2^24-1) records. An unpatched GoFlow2 sized the
 * expanded flow sample's records from the count alone: 2^32-1 of them is a
 * 96 GiB allocation, and the process dies of it.
 */
export function sflowAbsurdCounts(): Buffer[] {
  return [
    sflowHeader(0xffffffff),
    sflowHeader(1000),
    Buffer.concat([sflowHeader(1), flowSample(0xffffffff)]),
    Buffer.concat([sflowHeader(1), counterSample(0xffffffff)]),
    Buffer.concat([sflowHeader(1), expandedFlowSample(0x00ffffff)]),
    Buffer.concat([sflowHeader(1), expandedFlowSample(0xffffffff)]),
    Buffer.concat([sflowHeader(1), flowSample(1, u32(1, 0xffffffff))]), // a record longer than its sample
  ];
}

/** sFlow datagrams without samples, each naming another agent (10.0.0.0 and up). */
export function sflowAgents(count: number): Buffer[] {
  return Array.from({ length: count }, (_, i) => sflowHeader(0, 0x0a000000 + i));
}

/** A valid header of each protocol, for random datagrams to start with. */
const prefixes = [u16(5, 30), u16(9, 5), u16(10, 1500), u32(5, 1)];

/**
 * `count` random datagrams from `seed` (1 to 1,504 bytes): pure noise, noise
 * behind a valid NetFlow v5, v9, IPFIX or sFlow header, or one of the hostile
 * datagrams above with a few bytes changed. The same seed gives the same datagrams.
 */
export function randomDatagrams(seed: number, count: number): Buffer[] {
  const rand = seededRandom(seed);
  const int = (n: number) => Math.floor(rand() * n);
  const noise = (n: number) => Buffer.from(Array.from({ length: n }, () => int(256)));
  const known = [zeroLengthTemplateV9(), ...zeroSizeTemplates(), ...truncatedHeaders(), ...emptyTemplates(), ...sflowAbsurdCounts()];
  return Array.from({ length: count }, () => {
    const kind = int(3);
    if (kind === 0) return noise(1 + int(1500));
    if (kind === 1) return Buffer.concat([prefixes[int(prefixes.length)]!, noise(int(1500))]);
    const mutated = Buffer.from(known[int(known.length)]!);
    for (let i = 0, n = 1 + int(4); i < n && mutated.length > 0; i++) mutated[int(mutated.length)] = int(256);
    return mutated;
  });
}
