import { Writer } from 'protobufjs/minimal';
import { flowRowJson } from '../../core/flow';
import { addressText, flowMessageFields as f, toFlowInput, type CollectedFlow } from '../../core/flow-message';
import { decodeFlowMessage, FlowMessageFramer } from '../../workers/collector/flow-message-decoder';

const nowNs = Date.now() * 1e6;
const v4 = (text: string) => Uint8Array.from(text.split('.').map(Number));

/** A FlowMessage as GoFlow2 writes it (protobuf), with a field GoFlow2 has that the service skips (etype 30). */
function encode(m: Partial<Record<keyof typeof f, number | Uint8Array>>): Uint8Array {
  const w = Writer.create();
  for (const [name, value] of Object.entries(m)) {
    const field = f[name as keyof typeof f];
    if (value instanceof Uint8Array) w.uint32((field << 3) | 2).bytes(value);
    else w.uint32(field << 3).uint64(value);
  }
  w.uint32(30 << 3).uint32(0x0800);
  return w.finish();
}

const delimited = (messages: Uint8Array[]) => Buffer.concat(messages.map((m) => Buffer.from(Writer.create().bytes(m).finish())));

const sample: Partial<Record<keyof typeof f, number | Uint8Array>> = {
  type: 4,
  timeReceivedNs: nowNs,
  samplingRate: 10,
  samplerAddress: v4('192.0.2.7'),
  srcAddr: v4('10.0.0.1'),
  dstAddr: v4('10.0.0.2'),
  bytes: 1500,
  packets: 3,
  proto: 6,
  srcPort: 40000,
  dstPort: 443,
  tcpFlags: 0x12,
  srcAs: 64500,
  dstAs: 64501,
  inIf: 3,
  outIf: 4,
  ipTos: 8,
  timeFlowStartNs: nowNs - 5e9,
  timeFlowEndNs: nowNs - 1e9,
};

const collected = (over: Partial<CollectedFlow> = {}): CollectedFlow => ({ ...decodeFlowMessage(encode(sample)), ...over });

describe('collected flows', () => {
  test('a GoFlow2 FlowMessage decodes to its fields, nanosecond times past 2^53 included', () => {
    const m = decodeFlowMessage(encode(sample));
    expect(m).toMatchObject({ type: 4, samplingRate: 10, bytes: 1500, packets: 3, proto: 6, srcPort: 40000, dstPort: 443, tcpFlags: 0x12, srcAs: 64500, dstAs: 64501 });
    expect(Math.abs(m.timeReceivedNs - nowNs)).toBeLessThan(1e3);
    expect(addressText(m.samplerAddress)).toBe('192.0.2.7');
  });

  test('length-delimited messages split anywhere across chunks come out whole and in order', () => {
    const stream = delimited([encode({ ...sample, bytes: 1 }), encode({ ...sample, bytes: 2 }), encode({ ...sample, bytes: 3 })]);
    for (let cut = 1; cut < stream.length; cut += 7) {
      const framer = new FlowMessageFramer();
      const bytes: number[] = [];
      for (const chunk of [stream.subarray(0, cut), stream.subarray(cut)]) framer.push(chunk, (msg) => bytes.push(decodeFlowMessage(msg).bytes));
      expect(bytes).toEqual([1, 2, 3]);
    }
  });

  test('a frame longer than any flow message means the output lost its framing', () => {
    expect(() => new FlowMessageFramer().push(Buffer.from([0xff, 0xff, 0x7f]), () => undefined)).toThrow(/framing/);
  });

  test('IPv6 address bytes come out in the one normalized text form', () => {
    const bytes = Uint8Array.from([0x20, 0x01, 0x0d, 0xb8, ...new Array<number>(11).fill(0), 1]);
    expect(addressText(bytes)).toBe('2001:db8::1');
    expect(addressText(Uint8Array.from([...new Array<number>(10).fill(0), 0xff, 0xff, 10, 0, 0, 1]))).toBe('10.0.0.1');
    expect(addressText(Uint8Array.from([1, 2, 3]))).toBeUndefined();
  });

  test('volumes are scaled by the rate the exporter reports when the workspace registered none', () => {
    const input = toFlowInput(collected(), '192.0.2.7', 0);
    if (typeof input === 'string') throw new Error(input);
    const row = JSON.parse(flowRowJson(input, { org_id: 'o', event_id: 'e', ts: 1, received_at: 1 }).json) as Record<string, number>;
    expect([row.bytes, row.packets, row.sampling_rate]).toEqual([15_000, 30, 10]);
  });

  test('the rate a workspace registered for the exporter wins over the one it reports', () => {
    const input = toFlowInput(collected(), '192.0.2.7', 100);
    expect(typeof input !== 'string' && input.sampling_rate).toBe(100);
  });

  test('an absent or zero rate counts as 1 and is not stored', () => {
    const input = toFlowInput(collected({ samplingRate: 0 }), '192.0.2.7', 0);
    if (typeof input === 'string') throw new Error(input);
    const row = JSON.parse(flowRowJson(input, { org_id: 'o', event_id: 'e', ts: 1, received_at: 1 }).json) as Record<string, unknown>;
    expect([row.bytes, row.packets, row.sampling_rate]).toEqual([1500, 3, undefined]);
  });

  test('protocol numbers become the names HTTP flows use, unknown ones stay numbers', () => {
    const name = (proto: number) => {
      const input = toFlowInput(collected({ proto }), 'x', 0);
      return typeof input === 'string' ? input : input.protocol;
    };
    expect([name(6), name(17), name(1), name(58), name(253)]).toEqual(['tcp', 'udp', 'icmp', 'ipv6-icmp', '253']);
  });

  test('a flow start or end that is not a plausible time is left out, the flow is kept', () => {
    const wrapped = nowNs + 4_294_967_296 * 1e6; // an exporter's 32-bit uptime arithmetic wrapped
    const input = toFlowInput(collected({ timeFlowStartNs: wrapped, timeFlowEndNs: 0 }), 'x', 0);
    expect(typeof input !== 'string' && [input.flow_start, input.flow_end]).toEqual([undefined, undefined]);
  });

  test('a flow without addresses is refused with its reason', () => {
    expect(toFlowInput(collected({ srcAddr: undefined }), 'x', 0)).toBe('no_address');
    expect(toFlowInput(collected({ timeReceivedNs: 0 }), 'x', 0)).toBe('bad_time');
  });

  test('a record of zeros, as a decoder fills a truncated one, is no flow', () => {
    expect(toFlowInput(collected({ srcAddr: v4('0.0.0.0'), dstAddr: v4('0.0.0.0') }), 'x', 0)).toBe('no_address');
    expect(toFlowInput(collected({ bytes: 0, packets: 0 }), 'x', 0)).toBe('empty_flow');
  });
});
