import { flowDigestLine } from '../../core/flow';
import { telemetryHeaderNames } from '../../core/telemetry-headers';
import { screenFeedMessage, type FeedScreenConfig } from '../../workers/detection/feed-screen';
import { flow, syn, t0 } from '../support/detection-flows';

const config: FeedScreenConfig = { subjectPrefix: 'nettel.detect.flow.', maxBytes: 64 * 1024 };
const now = t0;

/** A copy as the stream workers publish it, with what a test overrides. */
function copy(over: { subject?: string; body?: string; kind?: string; org?: string | null; rows?: object[] } = {}) {
  const org = 'org_a';
  const rows = over.rows ?? [{ org_id: org, event_id: 'evt_1', ...flow() }];
  const data = Buffer.from(over.body ?? rows.map((r) => JSON.stringify(r)).join('\n') + '\n');
  const h: Record<string, string> = { [telemetryHeaderNames.kind]: over.kind ?? 'flow' };
  if (over.org !== null) h[telemetryHeaderNames.org] = over.org ?? org;
  return { subject: over.subject ?? `nettel.detect.flow.${org}`, data, headers: { get: (k: string) => h[k] ?? '' } };
}
const reason = (m: ReturnType<typeof copy>) => {
  const v = screenFeedMessage(m, config, now);
  return v.ok ? 'ok' : v.reason;
};
const row = (over: object) => ({ org_id: 'org_a', event_id: 'evt_1', ...flow(), ...over });

describe('the detection feed screen', () => {
  test("a copy as the writers publish it is read as the subject's workspace and its flows", () => {
    const rows = [row({}), row({ tcp_flags: syn, exporter: '192.0.2.1', in_if: 3, out_if: 4 })];
    expect(screenFeedMessage(copy({ rows }), config, now)).toEqual({ ok: true, org: 'org_a', flows: [flow(), { ...flow(), tcp_flags: syn, exporter: '192.0.2.1', in_if: 3, out_if: 4 }] });
  });

  test('a message larger than any copy is refused as oversize', () => {
    expect(reason(copy({ body: `${JSON.stringify(row({}))}\n`.repeat(1_000) }))).toBe('oversize');
  });

  test('a subject that names no workspace (a further token, or none) is refused', () => {
    expect(reason(copy({ subject: 'nettel.detect.flow.org_a.more' }))).toBe('bad_subject');
    expect(reason(copy({ subject: 'nettel.detect.flow._platform' }))).toBe('bad_subject');
  });

  test("a workspace header that differs from the subject's, or is missing, is refused", () => {
    expect(reason(copy({ org: 'org_b' }))).toBe('bad_headers');
    expect(reason(copy({ org: null }))).toBe('bad_headers');
  });

  test('a kind header other than flow is refused', () => {
    expect(reason(copy({ kind: 'signal' }))).toBe('bad_headers');
  });

  test('garbage bytes, a truncated line and an empty message are refused as not rows', () => {
    expect(reason(copy({ body: '\u0000\u00ff\u0013garbage' }))).toBe('not_rows');
    expect(reason(copy({ body: JSON.stringify(row({})).slice(0, 40) + '\n' }))).toBe('not_rows');
    expect(reason(copy({ body: '' }))).toBe('not_rows');
    expect(reason(copy({ body: '[1,2]\n' }))).toBe('not_rows');
  });

  test("a row of another workspace than the subject's refuses the whole message", () => {
    expect(reason(copy({ rows: [row({}), row({ org_id: 'org_b' })] }))).toBe('org_mismatch');
  });

  test('a row missing a field the detectors need refuses the whole message', () => {
    const missing: Record<string, unknown> = row({});
    delete missing.packets;
    expect(reason(copy({ rows: [row({}), missing] }))).toBe('bad_row');
  });

  test.each([
    ['negative packets', { packets: -5 }],
    ['packets past a safe integer', { packets: 1e300 }],
    ['fractional bytes', { bytes: 1.5 }],
    ['a port past 65535', { dst_port: 70_000 }],
    ['TCP flags past 16 bits', { tcp_flags: 0x10000 }],
    ['an interface past 32 bits', { in_if: 2 ** 32 }],
    ['a destination that is no address', { dst_ip: 'x'.repeat(10_000) }],
    ['an event time more than a day ahead of the clock', { ts: now + 2 * 86_400_000 }],
    ['an event time before 2000', { ts: 5 }],
    ['a protocol of 17 characters', { protocol: 'p'.repeat(17) }],
  ])('a row with %s refuses the whole message', (_name, over) => {
    expect(reason(copy({ rows: [row({}), row(over)] }))).toBe('bad_row');
  });

  describe('a copy that is a digest (its Nettel-Digest header set)', () => {
    const digestCopy = (lines: string[], over: { org?: string } = {}) => {
      const m = copy({ body: lines.join('\n') + '\n', org: over.org });
      const get = m.headers.get;
      return { ...m, headers: { get: (k: string) => (k === telemetryHeaderNames.digest ? '1' : get(k)) } };
    };

    test("is read as the subject's workspace and its flows", () => {
      const flows = [flow(), { ...flow(), tcp_flags: syn, exporter: '192.0.2.1', in_if: 3, out_if: 4 }];
      expect(screenFeedMessage(digestCopy(flows.map(flowDigestLine)), config, now)).toEqual({ ok: true, org: 'org_a', flows });
    });

    test('with one line out of range is refused whole', () => {
      const v = screenFeedMessage(digestCopy([flowDigestLine(flow()), flowDigestLine({ ...flow(), dst_port: 70_000 })]), config, now);
      expect(v).toEqual({ ok: false, reason: 'bad_row' });
    });

    test("whose workspace header differs from the subject's is refused before any line is read", () => {
      expect(screenFeedMessage(digestCopy([flowDigestLine(flow())], { org: 'org_b' }), config, now)).toEqual({ ok: false, reason: 'bad_headers' });
    });

    test('that holds rows, not digest lines, is refused', () => {
      expect(screenFeedMessage(digestCopy([JSON.stringify(row({}))]), config, now)).toEqual({ ok: false, reason: 'bad_row' });
    });
  });
});
