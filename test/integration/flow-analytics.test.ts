import type { ErrorBody, FlowDimensionName, FlowKeyView, FlowSeriesView, FlowTopView, FlowView, Page } from '../support/api-types';
import { seededRandom } from '../support/malformed';
import { startTestStack, transports, type TestStack } from '../support/test-stack';
import { waitForTelemetryDrained } from '../support/wait';

/**
 * Analysts' flow queries on any dimension: flows carrying every exporter
 * field are posted through the API for two workspaces, and every answer is
 * compared with what is computed here from what was posted.
 */
const minute = 60_000;
const hour = 60 * minute;
const day = 24 * hour;
const h10 = Math.floor(Date.now() / hour) * hour - 4 * hour;
const at = (h: number, m = 0, s = 0) => h10 + (h - 10) * hour + m * minute + s * 1000;
const iso = (ms: number) => new Date(ms).toISOString();
const whole = { from: at(10), to: at(13) };

interface Posted {
  src_ip: string;
  dst_ip: string;
  protocol: string;
  src_port: number;
  dst_port: number;
  bytes: number;
  packets: number;
  timestamp: number;
  exporter?: string;
  dst_as?: number;
  tos?: number;
}
type Totals = { bytes: number; packets: number; flows: number };

const sources = ['10.0.0.1', '10.255.255.255', '11.0.0.0', '9.255.255.255', '192.168.4.20', '2001:db8::1', '2001:db8:ffff::9', '2001:db9::1', '2001:db7:ffff::1'];
const destinations = ['172.16.0.1', '172.16.200.3', '172.17.0.1', '2001:db8::80', 'fe80::1'];

function postedFlows(seed: number, count: number, extra: Partial<Posted> = {}): Posted[] {
  const rand = seededRandom(seed);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(rand() * items.length)]!;
  return Array.from({ length: count }, () => {
    const exporter = pick(['192.0.2.1', '192.0.2.2', '2001:db8:ffff::1', undefined]);
    const dstAs = pick([64500, 64501, 15169, undefined]);
    return {
      src_ip: pick(sources),
      dst_ip: pick(destinations),
      protocol: pick(['tcp', 'udp', 'icmp']),
      src_port: pick([12345, 40000]),
      dst_port: pick([443, 80, 53]),
      bytes: 1 + Math.floor(rand() * 1_000_000),
      packets: 1 + Math.floor(rand() * 1000),
      timestamp: at(10) + Math.floor(rand() * 3 * hour),
      ...(exporter ? { exporter } : {}),
      ...(dstAs ? { dst_as: dstAs } : {}),
      tos: pick([0, 184]),
      ...extra,
    };
  });
}

/** A dimension's value as the API shows it: an absent exporter is null, an absent number 0. */
const valueOf = (f: Posted, dim: FlowDimensionName): string | number | null =>
  dim === 'exporter' ? (f.exporter ?? null) : ((f as unknown as Record<string, string | number | undefined>)[dim] ?? 0);
const inRange = (range: { from: number; to: number }) => (f: Posted) => f.timestamp >= range.from && f.timestamp < range.to;

/** Sums by key over the flows, as top rows with every total, by bytes desc. */
/** AS names as the stack's databases give them (set once the stack runs): top rows by an AS carry its name, resolved when read. */
let asName: (asn: number) => string | null = () => null;

/** A flow as the API answers it, less what enrichment adds (docs/enrichment.md), which the enrichment tests check. */
const withoutEnrichment = (f: Record<string, unknown>) =>
  Object.fromEntries(Object.entries(f).filter(([k]) => !/_as_name$|_country$|_net_|^enrichment_version$/.test(k)));

function expectedTop(flows: Posted[], by: FlowDimensionName[]) {
  const sums = new Map<string, FlowKeyView & Totals>();
  for (const f of flows) {
    const key = Object.fromEntries(by.map((d) => [d, valueOf(f, d)])) as FlowKeyView;
    for (const d of by) if (d === 'src_as' || d === 'dst_as') (key as Record<string, unknown>)[`${d}_name`] = asName(Number(key[d]));
    const id = JSON.stringify(key);
    const s = sums.get(id) ?? { ...key, bytes: 0, packets: 0, flows: 0 };
    sums.set(id, { ...s, bytes: s.bytes + f.bytes, packets: s.packets + f.packets, flows: s.flows + 1 });
  }
  return [...sums.values()].sort((a, b) => b.bytes - a.bytes);
}

/** Bytes and packets per step over the range, every step present. */
function expectedPoints(flows: Posted[], range: { from: number; to: number }, step: number) {
  const points = [];
  for (let t = Math.floor(range.from / step) * step; t < range.to; t += step) {
    const inStep = flows.filter((f) => f.timestamp >= Math.max(t, range.from) && f.timestamp < Math.min(t + step, range.to));
    const bytes = inStep.reduce((n, f) => n + f.bytes, 0);
    const packets = inStep.reduce((n, f) => n + f.packets, 0);
    points.push({ t: iso(t), bps: (bytes * 8) / (step / 1000), pps: packets / (step / 1000), bytes, packets });
  }
  return points;
}

const spelling = (f: { src_ip: string; dst_ip: string; bytes: number; timestamp: number | string }) =>
  `${f.src_ip} ${f.dst_ip} ${f.bytes} ${typeof f.timestamp === 'number' ? iso(f.timestamp) : f.timestamp}`;

describe.each(transports)('flow analytics on any dimension on %s', (transport) => {
  let t: TestStack;
  let key: string;
  let otherKey: string;
  const flows = postedFlows(4242, 900);
  const theirs = postedFlows(77, 60, { dst_as: 65001, exporter: '198.51.100.7' });
  const get = <T>(route: string, as = key) => t.request<T>('GET', route, { key: as });
  const span = (r: { from: number; to: number }) => `from=${r.from}&to=${r.to}`;
  const listed = async (query: string) => {
    const res = await get<Page<FlowView>>(`/v1/telemetry/flows?${span(whole)}&limit=1000&${query}`);
    expect(res.status).toBe(200);
    return res.body.data.map((f) => spelling({ ...f, timestamp: f.ts })).sort();
  };
  const posted = (keep: (f: Posted) => boolean) => flows.filter(keep).map(spelling).sort();

  beforeAll(async () => {
    t = await startTestStack(transport, { WORKER_MAX_WAIT_MS: '20' });
    asName = (asn) => t.stack.adapters.enrichment?.databases?.asNames.get(asn) ?? null;
    key = (await t.mintKey({ role: 'operator', orgId: `fa-mine-${transport}` })).key;
    otherKey = (await t.mintKey({ role: 'operator', orgId: `fa-theirs-${transport}` })).key;
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

  test('IPv4 and IPv6 CIDR filters list exactly the posted flows inside the prefix', async () => {
    const v4 = (ip: string) => !ip.includes(':') && ip.split('.')[0] === '10';
    const v6 = (ip: string) => /^2001:db8:/.test(ip);
    expect(await listed('src_ip=10.0.0.0/8')).toEqual(posted((f) => v4(f.src_ip)));
    expect(await listed('src_ip=2001:db8::/32')).toEqual(posted((f) => v6(f.src_ip)));
    expect(await listed('dst_ip=172.16.0.0/16')).toEqual(posted((f) => f.dst_ip.startsWith('172.16.')));
    expect(await listed('exporter=2001:db8:ff00::/40')).toEqual(posted((f) => f.exporter === '2001:db8:ffff::1'));
    expect(await listed('src_ip=10.0.0.1')).toEqual(posted((f) => f.src_ip === '10.0.0.1'));
  });

  test('a comma-separated list of values matches any of them, and filters on several dimensions all apply', async () => {
    expect(await listed('src_ip=10.0.0.0/8,2001:db8::/32')).toEqual(posted((f) => f.src_ip.startsWith('10.') || f.src_ip.startsWith('2001:db8:')));
    expect(await listed('dst_port=443,53&protocol=TCP,icmp&tos=184')).toEqual(
      posted((f) => [443, 53].includes(f.dst_port) && ['tcp', 'icmp'].includes(f.protocol) && f.tos === 184),
    );
    expect(await listed('dst_as=64500,15169&exporter=192.0.2.1')).toEqual(posted((f) => [64500, 15169].includes(f.dst_as ?? 0) && f.exporter === '192.0.2.1'));
  });

  test('flows carry the exporter fields, null where the flow had none', async () => {
    const full = { src_ip: '203.0.113.5', dst_ip: '203.0.113.6', bytes: 10, packets: 1, protocol: 'tcp', timestamp: at(9, 30), exporter: '192.0.2.9',
      in_if: 3, out_if: 4, src_as: 64496, dst_as: 64497, tcp_flags: 18, tos: 8, flow_start: at(9, 29), flow_end: at(9, 30), sampling_rate: 10 };
    const bare = { src_ip: '203.0.113.5', dst_ip: '203.0.113.7', bytes: 20, packets: 2, protocol: 'udp', timestamp: at(9, 31) };
    expect((await t.request('POST', '/flow', { key, body: [full, bare] })).status).toBe(201);
    await waitForTelemetryDrained(t.stack.nats.jsm, t.stack.config.nats.prefix);
    const res = await get<Page<FlowView>>(`/v1/telemetry/flows?from=${at(9)}&to=${at(10)}&src_ip=203.0.113.5`);
    const absent = { src_port: 0, dst_port: 0, exporter: null, in_if: 0, out_if: 0, src_as: 0, dst_as: 0, tcp_flags: 0, tos: 0, flow_start: null, flow_end: null, sampling_rate: 0 };
    expect(res.body.data.map((f) => withoutEnrichment({ ...f, event_id: 'id' }))).toEqual([
      { event_id: 'id', ts: iso(bare.timestamp), ...absent, src_ip: bare.src_ip, dst_ip: bare.dst_ip, bytes: 20, packets: 2, protocol: 'udp' },
      {
        ...full, event_id: 'id', ts: iso(full.timestamp), timestamp: undefined, src_port: 0, dst_port: 0, bytes: 100, packets: 10,
        flow_start: iso(full.flow_start), flow_end: iso(full.flow_end),
      },
    ]);
  });

  test('the top source → destination pairs equal the posted sums, read from the raw flows', async () => {
    const res = await get<FlowTopView>(`/v1/telemetry/flows/top?by=src_ip,dst_ip&totals=all&limit=1000&${span(whole)}`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ data: expectedTop(flows, ['src_ip', 'dst_ip']), resolution: 'raw', segments: [{ from: iso(whole.from), to: iso(whole.to), resolution: 'raw' }] });
  });

  test('the top destination AS, exporters and three-dimension keys equal the posted sums, with filters', async () => {
    const top = async (query: string) => (await get<FlowTopView>(`/v1/telemetry/flows/top?totals=all&limit=1000&${span(whole)}&${query}`)).body.data;
    expect(await top('by=dst_as')).toEqual(expectedTop(flows, ['dst_as']));
    expect(await top('by=exporter')).toEqual(expectedTop(flows, ['exporter']));
    expect(await top('by=exporter,dst_as,protocol&src_ip=2001:db8::/32')).toEqual(expectedTop(flows.filter((f) => f.src_ip.startsWith('2001:db8:')), ['exporter', 'dst_as', 'protocol']));
    const byFlows = (await get<FlowTopView>(`/v1/telemetry/flows/top?by=dst_port&metric=flows&${span(whole)}`)).body.data;
    const expected = expectedTop(flows, ['dst_port']).map((r) => ({ dst_port: r.dst_port as number, flows: r.flows }));
    expected.sort((a, b) => b.flows - a.flows || a.dst_port - b.dst_port);
    expect(byFlows).toEqual(expected);
  });

  test('a top query on the destination with a CIDR filter is still read from the rollups, and exact', async () => {
    const range = { from: at(10, 3, 17), to: at(12, 48, 41) };
    const res = await get<FlowTopView>(`/v1/telemetry/flows/top?by=dst_ip&metric=packets&limit=1000&${span(range)}&dst_ip=172.16.0.0/12,2001:db8::/32&protocol=udp`);
    const expected = expectedTop(flows.filter(inRange(range)).filter((f) => f.protocol === 'udp' && !f.dst_ip.startsWith('fe80')), ['dst_ip'])
      .sort((a, b) => b.packets - a.packets)
      .map((r) => ({ dst_ip: r.dst_ip, packets: r.packets, flows: r.flows }));
    expect(res.body.data).toEqual(expected);
    expect(res.body.resolution).toBe('1h');
    expect(res.body.segments.map((s) => s.resolution)).toEqual(['raw', '1m', '5m', '1h', '5m', '1m', 'raw']);
  });

  test('series points sum to the posted volumes per step, with bps = bytes × 8 / step, and empty steps as zeros', async () => {
    const range = { from: at(9), to: at(13) };
    const hourly = await get<FlowSeriesView>(`/v1/telemetry/flows/series?step=3600&${span(range)}&src_ip=10.0.0.0/8`);
    expect(hourly.status).toBe(200);
    expect(hourly.body).toMatchObject({ step: 3600, resolution: '1h' });
    expect(hourly.body.series).toEqual([{ key: null, points: expectedPoints(flows.filter((f) => f.src_ip.startsWith('10.')), range, hour) }]);
    const edges = { from: at(10, 7, 30), to: at(12, 52, 10) };
    const fine = await get<FlowSeriesView>(`/v1/telemetry/flows/series?step=900&${span(edges)}&protocol=tcp`);
    expect(fine.body.series).toEqual([{ key: null, points: expectedPoints(flows.filter((f) => f.protocol === 'tcp'), edges, 15 * minute) }]);
    expect(fine.body.resolution).toBe('5m');
    const byDefault = await get<FlowSeriesView>(`/v1/telemetry/flows/series?${span(whole)}&dst_as=64501`);
    expect(byDefault.body.step).toBe(60);
    // The dimension rollup keeps dst_as by the hour only: a one-minute step reads the raw flows.
    expect(byDefault.body.resolution).toBe('raw');
    expect(byDefault.body.series[0]!.points).toEqual(expectedPoints(flows.filter((f) => f.dst_as === 64501), whole, minute));
  });

  test('a split series holds the top keys over the range and the others, which sum to the total at every step', async () => {
    for (const [dim, step] of [['dst_ip', 1800], ['exporter', 3600], ['dst_as', 3600], ['protocol', 900]] as const) {
      const res = await get<FlowSeriesView>(`/v1/telemetry/flows/series?step=${step}&split_by=${dim}&limit=${dim === 'protocol' ? 2 : 3}&${span(whole)}`);
      expect(res.status).toBe(200);
      const top = expectedTop(flows, [dim]).slice(0, dim === 'protocol' ? 2 : 3);
      expect(res.body.series.map((s) => s.key)).toEqual([...top.map((r) => ({ [dim]: r[dim] })), { other: true }]);
      top.forEach((r, i) => expect(res.body.series[i]!.points).toEqual(expectedPoints(flows.filter((f) => valueOf(f, dim) === r[dim]), whole, step * 1000)));
      const total = expectedPoints(flows, whole, step * 1000);
      total.forEach((p, i) => expect(res.body.series.reduce((n, s) => n + s.points[i]!.bytes, 0)).toBe(p.bytes));
      total.forEach((p, i) => expect(res.body.series.reduce((n, s) => n + s.points[i]!.packets, 0)).toBe(p.packets));
    }
  });

  test('bad filter values, dimensions and steps are 400 naming the parameter', async () => {
    const cases: Array<[string, string]> = [
      ['/v1/telemetry/flows?src_ip=10.0.0.0/33', 'src_ip'],
      ['/v1/telemetry/flows?dst_port=70000', 'dst_port'],
      ['/v1/telemetry/flows/top?by=dst_ip&exporter=router-1', 'exporter'],
      ['/v1/telemetry/flows/top?by=dst_ip&tos=1,,2', 'tos'],
      ['/v1/telemetry/flows/top?by=color', 'by'],
      ['/v1/telemetry/flows/top?by=src_ip,dst_ip,tos,dst_as', 'by'],
      ['/v1/telemetry/flows/series?dst_as=AS15169', 'dst_as'],
      ['/v1/telemetry/flows/series?split_by=src_ip,dst_ip', 'split_by'],
      ['/v1/telemetry/flows/series?step=90', 'step'],
      [`/v1/telemetry/flows/series?step=60&split_by=dst_ip&limit=20&from=${at(13) - 2 * day}&to=${at(13)}`, 'step'],
    ];
    for (const [route, param] of cases) {
      const res = await get<ErrorBody>(route);
      expect([route, res.status, res.body.error.code]).toEqual([route, 400, 'VALIDATION_ERROR']);
      expect(res.body.error.details?.map((d) => d.path)).toContain(param);
    }
  });

  test('a query that needs the raw flows is refused over more than 7 days, saying why, while rollups answer it', async () => {
    const eightDays = `from=${at(13) - 8 * day}&to=${at(13)}`;
    for (const route of [`/v1/telemetry/flows/top?by=dst_port&${eightDays}`, `/v1/telemetry/flows/series?split_by=tcp_flags&${eightDays}`, `/v1/telemetry/flows/top?by=src_ip,dst_ip&${eightDays}`]) {
      const res = await get<ErrorBody>(route);
      expect(res.status).toBe(400);
      expect(res.body.error.message).toMatch(/at most 7 days when the query reads the raw flows \(.+\)/);
    }
    expect((await get(`/v1/telemetry/flows/top?by=dst_ip&dst_ip=172.16.0.0/16&${eightDays}`)).status).toBe(200);
    expect((await get(`/v1/telemetry/flows/series?split_by=src_ip&src_ip=10.0.0.0/8&${eightDays}`)).status).toBe(200);
    // The dimension rollups keep the exporter and AS numbers.
    expect((await get(`/v1/telemetry/flows/top?by=exporter&${eightDays}`)).status).toBe(200);
    expect((await get(`/v1/telemetry/flows/series?split_by=dst_as&${eightDays}`)).status).toBe(200);
  });

  test("another workspace's flows never appear, and its own queries see only its flows", async () => {
    expect(await listed('dst_as=65001')).toEqual([]);
    expect(await listed('exporter=198.51.100.0/24')).toEqual([]);
    const mine = await get<FlowTopView>(`/v1/telemetry/flows/top?by=src_ip&totals=all&limit=1000&${span(whole)}`);
    expect(mine.body.data).toEqual(expectedTop(flows, ['src_ip']));
    const series = await get<FlowSeriesView>(`/v1/telemetry/flows/series?step=3600&${span(whole)}`);
    expect(series.body.series[0]!.points).toEqual(expectedPoints(flows, whole, hour));
    const theirTop = await get<FlowTopView>(`/v1/telemetry/flows/top?by=dst_as,exporter&totals=all&${span(whole)}`, otherKey);
    expect(theirTop.body.data).toEqual(expectedTop(theirs, ['dst_as', 'exporter']));
  });
});
