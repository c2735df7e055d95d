import { flowDigestLine, flowRowJson, type FlowInput } from '../../core/flow';
import { readFlowDigest } from '../../core/detection/flow-digest-reader';
import { readFlowRows } from '../../workers/detection/flow-lines';
import { flow, seeded, syn, t0 } from '../support/detection-flows';

const times = { earliest: t0 - 86_400_000, latest: t0 + 86_400_000 };
const digestOf = (lines: string[]) => Buffer.from(lines.join('\n') + '\n');
const verdict = (lines: string[]) => {
  const v = readFlowDigest(digestOf(lines), times);
  return v.ok ? 'ok' : v.reason;
};

/** A flow as a producer takes it, every optional field drawn at random. */
function randomInput(random: () => number): FlowInput {
  const pick = <T>(items: T[]) => items[Math.floor(random() * items.length)]!;
  const maybe = <T>(value: T) => (random() < 0.5 ? value : undefined);
  return {
    src_ip: pick(['198.51.100.7', '2001:db8::1', '10.0.0.255']),
    dst_ip: pick(['203.0.113.9', '2001:db8:ffff::9', '192.0.2.1']),
    src_port: maybe(Math.floor(random() * 65_536)),
    dst_port: maybe(Math.floor(random() * 65_536)),
    protocol: pick(['tcp', 'udp', 'icmp', '47', 'a\tb', 'x"y', 'back\\slash', '"quoted']),
    bytes: Math.floor(random() * 1e9),
    packets: Math.floor(random() * 1e6),
    timestamp: t0 + Math.floor(random() * 60_000),
    sampling_rate: maybe(1 + Math.floor(random() * 1000)),
    tcp_flags: maybe(Math.floor(random() * 256)),
    exporter: maybe(pick(['192.0.2.17', '2001:db8::17'])),
    in_if: maybe(Math.floor(random() * 4_294_967_296)),
    out_if: maybe(Math.floor(random() * 4_294_967_296)),
  };
}

describe('the detection digest', () => {
  test("a flow's digest line reads back as the flow its stored row gives the detectors", () => {
    const random = seeded(3);
    const stamped = Array.from({ length: 2_000 }, (_, i) => flowRowJson(randomInput(random), { org_id: 'org_a', event_id: `evt_${i}`, ts: t0, received_at: t0 }));
    const fromRows = readFlowRows(Buffer.from(stamped.map((s) => s.json).join('\n') + '\n'), 'org_a', times);
    const fromDigest = readFlowDigest(digestOf(stamped.map((s) => s.digest)), times);
    expect(fromRows.ok).toBe(true);
    expect(fromDigest).toEqual(fromRows);
  });

  test('a protocol holding a tab, a quote or a backslash stays one field of one line', () => {
    for (const protocol of ['a\tb', 'x"y', 'a\\b', '"tcp"']) {
      const line = flowDigestLine(flow({ protocol }));
      expect(line.split('\t')).toHaveLength(12);
      expect(readFlowDigest(digestOf([line]), times)).toEqual({ ok: true, flows: [flow({ protocol })] });
    }
  });

  test('absent optional fields are read as absent, not as zero', () => {
    const v = readFlowDigest(digestOf([flowDigestLine(flow())]), times);
    expect(v).toEqual({ ok: true, flows: [flow()] });
    expect(v.ok && 'tcp_flags' in v.flows[0]!).toBe(false);
  });

  test('a line with a field too few or too many refuses the whole message', () => {
    const line = flowDigestLine(flow({ tcp_flags: syn }));
    expect(verdict([line, line.slice(0, line.lastIndexOf('\t'))])).toBe('bad_row');
    expect(verdict([line, `${line}\t7`])).toBe('bad_row');
  });

  test('a number that is not plain digits, or is past its range, refuses the whole message', () => {
    const fields = flowDigestLine(flow({ tcp_flags: syn, in_if: 1 })).split('\t');
    const withField = (i: number, value: string) => fields.map((f, k) => (k === i ? value : f)).join('\t');
    for (const [i, value] of [[0, ''], [0, '1e3'], [3, '65536'], [4, '-1'], [6, '0x10'], [7, '9007199254740993'], [8, '65536'], [10, '4294967296'], [7, ' 1']] as const) {
      expect([i, value, verdict([withField(i, value)])]).toEqual([i, value, 'bad_row']);
    }
  });

  test('an address that is not one, or an event time out of bounds, refuses the whole message', () => {
    expect(verdict([flowDigestLine(flow({ src_ip: 'not-an-ip' }))])).toBe('bad_row');
    expect(verdict([flowDigestLine(flow({ exporter: '203.0.113.9%eth0' }))])).toBe('bad_row');
    expect(verdict([flowDigestLine(flow({ ts: times.latest + 1 }))])).toBe('bad_row');
  });

  test('an empty digest, or one cut within its last line, is not rows', () => {
    expect(readFlowDigest(Buffer.from(''), times)).toEqual({ ok: false, reason: 'not_rows' });
    expect(readFlowDigest(Buffer.from(flowDigestLine(flow())), times)).toEqual({ ok: false, reason: 'not_rows' });
    expect(readFlowDigest(Buffer.from('\n'), times)).toEqual({ ok: false, reason: 'bad_row' });
  });
});
