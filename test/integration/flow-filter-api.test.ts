import type { ErrorBody, FlowSeriesView, FlowTopView, FlowView, Page } from '../support/api-types';
import { seededRandom } from '../support/malformed';
import { startTestStack, transports, type TestStack } from '../support/test-stack';
import { waitForTelemetryDrained } from '../support/wait';

/**
 * The filter language through the analyst API: `filter=<text>` on the flows
 * list, top-N and series, answered from the coarsest table that can (the
 * rollups for their keys, the raw flows for ports and AS numbers), combined
 * with the per-dimension parameters, and a bad filter a 400 that names its
 * place. Expected answers are computed here from what was posted.
 */
const minute = 60_000;
const hour = 60 * minute;
const h10 = Math.floor(Date.now() / hour) * hour - 4 * hour;
const at = (h: number, m = 0) => h10 + (h - 10) * hour + m * minute;
const iso = (ms: number) => new Date(ms).toISOString();
const whole = { from: at(10), to: at(13) };

interface Posted {
  src_ip: string;
  dst_ip: string;
  protocol: string;
  dst_port: number;
  dst_as: number;
  bytes: number;
  packets: number;
  timestamp: number;
}

function postedFlows(seed: number, count: number, extra: Partial<Posted> = {}): Posted[] {
  const rand = seededRandom(seed);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(rand() * items.length)]!;
  return Array.from({ length: count }, () => ({
    src_ip: pick(['10.0.0.1', '10.200.0.9', '11.0.0.1', '2001:db8::1', '2001:db9::1']),
    dst_ip: pick(['172.16.0.1', '172.16.200.3', '172.32.0.1', '2001:db8::80']),
    protocol: pick(['tcp', 'udp', 'icmp']),
    dst_port: pick([443, 80, 53]),
    dst_as: pick([64500, 13335, 15169]),
    bytes: 1 + Math.floor(rand() * 100_000),
    packets: 1 + Math.floor(rand() * 100),
    timestamp: at(10) + Math.floor(rand() * 3 * hour),
    ...extra,
  }));
}

const sumBy = (flows: Posted[], key: (f: Posted) => string | number) => {
  const sums = new Map<string | number, { bytes: number; flows: number }>();
  for (const f of flows) {
    const s = sums.get(key(f)) ?? { bytes: 0, flows: 0 };
    sums.set(key(f), { bytes: s.bytes + f.bytes, flows: s.flows + 1 });
  }
  return [...sums.entries()].sort((a, b) => b[1].bytes - a[1].bytes);
};

describe.each(transports)('the filter parameter of the analyst API on %s', (transport) => {
  let t: TestStack;
  let key: string;
  let otherKey: string;
  const flows = postedFlows(1234, 600);
  const theirs = postedFlows(99, 40, { dst_as: 65001, src_ip: '10.0.0.1' });
  const get = <T>(route: string, as = key) => t.request<T>('GET', route, { key: as });
  const span = (r: { from: number; to: number }) => `from=${r.from}&to=${r.to}`;
  const q = (text: string) => `filter=${encodeURIComponent(text)}`;

  beforeAll(async () => {
    t = await startTestStack(transport, { WORKER_MAX_WAIT_MS: '20' });
    key = (await t.mintKey({ role: 'operator', orgId: `ff-mine-${transport}` })).key;
    otherKey = (await t.mintKey({ role: 'operator', orgId: `ff-theirs-${transport}` })).key;
    for (const [as, batch] of [[key, flows], [otherKey, theirs]] as const) {
      const res = await t.request('POST', '/flow', { key: as, raw: batch.map((f) => JSON.stringify(f)).join('\n'), contentType: 'application/x-ndjson' });
      expect(res.status).toBe(201);
    }
    await waitForTelemetryDrained(t.stack.nats.jsm, t.stack.config.nats.prefix);
    // The flows' buckets have closed: folded, they are read from the 5-minute and hourly levels (storage/rollup-fold.ts).
    await t.stack.rollupFolder!.settle();
  });
  afterAll(async () => {
    await t.stop();
  });

  test('a top-N with a filter on AS and protocol is read from the raw flows and equals the posted sums', async () => {
    const res = await get<FlowTopView>(`/v1/telemetry/flows/top?by=dst_port&limit=10&${span(whole)}&${q("dst_as = AS13335 AND NOT protocol IN ('icmp')")}`);
    expect(res.status).toBe(200);
    const kept = flows.filter((f) => f.dst_as === 13335 && f.protocol !== 'icmp');
    expect(res.body.data).toEqual(sumBy(kept, (f) => f.dst_port).map(([port, s]) => ({ dst_port: port, bytes: s.bytes, flows: s.flows })));
    expect(res.body.resolution).toBe('raw');
  });

  test('a filter on the destination keys is answered by the destination rollups, exactly', async () => {
    const res = await get<FlowTopView>(`/v1/telemetry/flows/top?by=dst_ip&limit=10&${span(whole)}&${q("dst_ip << 172.16.0.0/12 AND (protocol = 'udp' OR protocol LIKE 'ic%')")}`);
    expect(res.status).toBe(200);
    const kept = flows.filter((f) => f.dst_ip.startsWith('172.16.') && f.protocol !== 'tcp');
    expect(res.body.data).toEqual(sumBy(kept, (f) => f.dst_ip).map(([ip, s]) => ({ dst_ip: ip, bytes: s.bytes, flows: s.flows })));
    expect(res.body.resolution).toBe('1h');
  });

  test('a series with a filter on the source is answered by the source rollups, and one workspace never sees another', async () => {
    const res = await get<FlowSeriesView>(`/v1/telemetry/flows/series?step=3600&${span(whole)}&${q('src_ip << 10.0.0.0/8 OR src_ip = 2001:db8::1')}`);
    expect(res.status).toBe(200);
    expect(res.body.resolution).toBe('1h');
    const kept = flows.filter((f) => f.src_ip.startsWith('10.') || f.src_ip === '2001:db8::1');
    const bytes = res.body.series[0]!.points.map((p) => p.bytes);
    expect(bytes).toEqual([0, 1, 2].map((h) => kept.filter((f) => f.timestamp >= at(10 + h) && f.timestamp < at(11 + h)).reduce((n, f) => n + f.bytes, 0)));
    const foreign = await get<FlowTopView>(`/v1/telemetry/flows/top?by=dst_as&${span(whole)}&${q('dst_as = 65001')}`);
    expect(foreign.body.data).toEqual([]);
  });

  test('the filter combines with the per-dimension parameters, and the flows list takes it too', async () => {
    const res = await get<Page<FlowView>>(`/v1/telemetry/flows?limit=1000&${span(whole)}&protocol=tcp&${q('dst_port >= 80 AND dst_port < 443 AND src_ip !<< 2001:db8::/32')}`);
    expect(res.status).toBe(200);
    const kept = flows.filter((f) => f.protocol === 'tcp' && f.dst_port === 80 && !f.src_ip.startsWith('2001:db8:'));
    expect(res.body.data.map((f) => `${f.src_ip} ${f.dst_ip} ${f.bytes} ${f.ts}`).sort()).toEqual(kept.map((f) => `${f.src_ip} ${f.dst_ip} ${f.bytes} ${iso(f.timestamp)}`).sort());
  });

  test('a bad filter is a 400 naming its place and what was expected, on every flow route', async () => {
    for (const route of ['/v1/telemetry/flows', '/v1/telemetry/flows/top', '/v1/telemetry/flows/series']) {
      const res = await get<ErrorBody>(`${route}?${q('dst_as = 1 AND\n  (src_ip << 10.0.0.0/8 OR')}`);
      expect([route, res.status, res.body.error.code]).toEqual([route, 400, 'VALIDATION_ERROR']);
      expect(res.body.error.message).toBe('invalid filter at 2:27 (offset 41): expected a dimension name, NOT or "(", found the end of the filter');
      expect(res.body.error.details).toEqual([{ path: 'filter', message: 'at 2:27 (offset 41): expected a dimension name, NOT or "(", found the end of the filter' }]);
    }
    const unknown = await get<ErrorBody>(`/v1/telemetry/flows/top?${q('dst_planet = 1')}`);
    expect([unknown.status, unknown.body.error.message]).toEqual([400, expect.stringContaining('at 1:1 (offset 0): expected a dimension (one of')]);
  });

  test('hostile filter text is refused or matched as data, never run as SQL', async () => {
    const injected = await get<FlowTopView>(`/v1/telemetry/flows/top?by=protocol&${span(whole)}&${q("protocol = 'tcp'' OR 1=1 --'")}`);
    expect(injected.status).toBe(400);
    const quoted = await get<FlowTopView>(`/v1/telemetry/flows/top?by=protocol&${span(whole)}&${q("protocol IN ('x\\' OR 1=1) --', 'tcp')")}`);
    expect(quoted.status).toBe(200);
    expect(quoted.body.data.map((r) => r.protocol)).toEqual(['tcp']);
    const huge = await get<ErrorBody>(`/v1/telemetry/flows/top?${q('('.repeat(200) + 'dst_as = 1' + ')'.repeat(200))}`);
    expect([huge.status, huge.body.error.message]).toEqual([400, expect.stringContaining('expected at most 32 nested parentheses or NOTs')]);
  });

  test('a filter that needs the raw flows bounds the range as the raw flows do, and says why', async () => {
    const res = await get<ErrorBody>(`/v1/telemetry/flows/top?by=dst_ip&from=${at(10) - 10 * 24 * hour}&to=${at(10)}&${q('dst_port = 53')}`);
    expect(res.status).toBe(400);
    expect(res.body.error.message).toMatch(/at most 7 days when the query reads the raw flows \(dst_port is kept by no rollup\)/);
  });
});
