import { flowRowJson, flowSchema, parseFlow, toFlowRow } from '../../core/flow';
import { signalSchema } from '../../core/telemetry';
import { seededRandom } from '../support/malformed';

const flow = { src_ip: '192.0.2.1', dst_ip: '2001:db8::1', bytes: 1500, packets: 3, protocol: 'TCP' };
const defined = (o: object): unknown => JSON.parse(JSON.stringify(o));

describe('telemetry validation', () => {
  test('a valid flow is accepted and its protocol lower-cased', () => {
    const r = parseFlow(flow);
    expect(r.success && r.data.protocol).toBe('tcp');
  });

  test('an address that is not IPv4 or IPv6 is refused', () => {
    expect(parseFlow({ ...flow, src_ip: '256.1.1.1' }).success).toBe(false);
    expect(parseFlow({ ...flow, src_ip: 'fe80::1%eth0' }).success).toBe(false);
    expect(parseFlow({ ...flow, dst_ip: 'example.com' }).success).toBe(false);
  });

  test('a negative, fractional or unsafe counter is refused', () => {
    for (const bytes of [-1, 1.5, Number.MAX_SAFE_INTEGER + 1, '10', NaN]) expect(parseFlow({ ...flow, bytes }).success).toBe(false);
  });

  test('an unknown field is refused', () => {
    expect(parseFlow({ ...flow, colour: 'red' }).success).toBe(false);
  });

  test('an ISO 8601 timestamp with an offset is taken as epoch milliseconds', () => {
    const r = parseFlow({ ...flow, timestamp: '2026-11-01T12:00:00Z' });
    expect(r.success && r.data.timestamp).toBe(Date.UTC(2026, 10, 1, 12));
  });

  test('a timestamp before 2000 or more than a day ahead is refused', () => {
    expect(parseFlow({ ...flow, timestamp: 0 }).success).toBe(false);
    expect(parseFlow({ ...flow, timestamp: Date.now() + 2 * 86_400_000 }).success).toBe(false);
  });

  test('the hand-written flow path agrees with the schema on 20,000 generated records', () => {
    const rand = seededRandom(7);
    const pick = <T>(xs: T[]) => xs[Math.floor(rand() * xs.length)]!;
    const values = {
      src_ip: ['10.0.0.1', '::1', 'fe80::1', 'fe80::1%eth0', '1.2.3', '::ffff:1.2.3.4', '', 5, null, 'x'.repeat(70)],
      bytes: [0, 1, -1, 2.5, 2 ** 53, '1', null, 1e15],
      protocol: ['tcp', ' UDP ', '', '   ', 'x'.repeat(17), 7, 'icmpv6'],
      dst_port: [undefined, 0, 65535, 65536, -1, 1.2, '80'],
      timestamp: [undefined, Date.now(), 946684800000, 946684799999, 1.5, '2026-01-01T00:00:00Z', '2026-01-01', Date.now() + 2 * 86_400_000],
    };
    for (let i = 0; i < 20_000; i += 1) {
      const record: Record<string, unknown> = {
        src_ip: pick(values.src_ip),
        dst_ip: pick(values.src_ip),
        bytes: pick(values.bytes),
        packets: pick(values.bytes),
        protocol: pick(values.protocol),
        dst_port: pick(values.dst_port),
        timestamp: pick(values.timestamp),
      };
      if (rand() < 0.1) delete record[pick(Object.keys(record))];
      if (rand() < 0.05) record.extra = 1;
      for (const k of Object.keys(record)) if (record[k] === undefined) delete record[k];
      const fast = parseFlow(record);
      const schema = flowSchema.safeParse(record);
      expect(fast.success).toBe(schema.success);
      if (fast.success && schema.success) expect(defined(fast.data)).toEqual(defined(schema.data));
    }
  });

  test('a signal of an unknown telemetry kind is refused', () => {
    expect(signalSchema.safeParse({ telemetry: 'snmp', service: 's', environment: 'e', region: 'r' }).success).toBe(false);
  });

  test('a flow row carries the stamp and the flow event time when given', () => {
    const row = toFlowRow({ ...flow, protocol: 'tcp', timestamp: 5 }, { org_id: 'o', event_id: 'e', ts: 9, received_at: 9 });
    expect(row).toEqual({ org_id: 'o', event_id: 'e', ts: 5, received_at: 9, src_ip: flow.src_ip, dst_ip: flow.dst_ip, src_port: 0, dst_port: 0, protocol: 'tcp', bytes: 1500, packets: 3 });
  });

  test('an exporter\'s fields are optional additions, each checked', () => {
    const enriched = { ...flow, exporter: '192.0.2.9', in_if: 4_294_967_295, src_as: 64500, tcp_flags: 0x1ff, tos: 255, flow_start: '2026-11-01T12:00:00Z', sampling_rate: 1000 };
    const r = parseFlow(enriched);
    expect(r.success && [r.data.exporter, r.data.flow_start, r.data.sampling_rate]).toEqual(['192.0.2.9', Date.UTC(2026, 10, 1, 12), 1000]);
    for (const bad of [{ exporter: 'router1' }, { in_if: -1 }, { src_as: 2 ** 32 }, { tos: 256 }, { tcp_flags: 1.5 }, { sampling_rate: '10' }]) {
      expect(parseFlow({ ...flow, ...bad }).success).toBe(false);
    }
  });

  test('a sampled flow is stored with its volumes times its rate, and keeps its rate', () => {
    const row = toFlowRow({ ...flow, protocol: 'tcp', sampling_rate: 100 }, { org_id: 'o', event_id: 'e', ts: 9, received_at: 9 });
    expect([row.bytes, row.packets, row.sampling_rate]).toEqual([150_000, 300, 100]);
  });

  test('the written-out flow line is exactly the JSON of the flow row', () => {
    const stamp = { org_id: 'org_a-1', event_id: 'evt_00ff', ts: 10, received_at: 11 };
    for (const input of [
      { ...flow, protocol: 'tcp' },
      { ...flow, protocol: 'we"ird\\', src_port: 1, dst_port: 65535, timestamp: 1_800_000_000_000 },
      { ...flow, src_ip: '::ffff:192.0.2.1', protocol: 'ü' },
      { ...flow, protocol: 'udp', exporter: '192.0.2.9', in_if: 1, out_if: 2, src_as: 64500, dst_as: 0, tcp_flags: 27, tos: 8, flow_start: 1, flow_end: 2, sampling_rate: 100 },
      { ...flow, protocol: 'udp', exporter: '2001:db8::1', sampling_rate: 0 },
    ]) {
      expect(flowRowJson(input, stamp).json).toBe(JSON.stringify(toFlowRow(input, stamp)));
    }
  });
});

