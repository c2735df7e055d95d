import type { ErrorBody, FlowSeriesView, FlowTopView } from '../support/api-types';
import { parseCsv } from '../support/csv';
import { ContractChecker, type OpenApiDoc } from '../support/openapi-check';
import { startTestStack, transports, type ApiResponse, type TestStack } from '../support/test-stack';
import { waitForTelemetryDrained } from '../support/wait';

/**
 * The analyst API of issue 34 on the real stack, both generations: rates in
 * bytes, packets or flows a second, the previous period beside the current
 * one, a sankey's three-dimension top-N (JSON and CSV), and completion of
 * the filter box from the workspace's own flows. Every answer is compared
 * with sums computed here from what was posted.
 */
const minute = 60_000;
/** The current range: 20 minutes an hour ago, on 10-minute steps; the previous period: the 20 minutes before it. */
const from = Math.floor(Date.now() / (10 * minute)) * 10 * minute - 60 * minute;
const to = from + 20 * minute;
const before = { from: from - 20 * minute, to: from };
const span = `from=${from}&to=${to}`;
const iso = (ms: number) => new Date(ms).toISOString();

interface Posted {
  src_ip: string;
  dst_ip: string;
  protocol: string;
  dst_port: number;
  bytes: number;
  packets: number;
  timestamp: number;
}

/** 30 flows in the current range, 12 in the previous, over three destinations; 172.16.0.9 only in the previous period. */
function postedFlows(): Posted[] {
  const flow = (i: number, at: number, dst: string): Posted => ({
    src_ip: `10.0.0.${1 + (i % 3)}`, dst_ip: dst, protocol: i % 2 ? 'udp' : 'tcp', dst_port: [443, 53, 80][i % 3]!,
    bytes: 100 * (1 + (i % 5)), packets: 1 + (i % 4), timestamp: at,
  });
  const current = Array.from({ length: 30 }, (_, i) => flow(i, from + (i % 20) * minute + 5000, `172.16.0.${1 + (i % 2)}`));
  const previous = Array.from({ length: 12 }, (_, i) => flow(i, before.from + (i % 20) * minute + 5000, i < 4 ? '172.16.0.9' : '172.16.0.1'));
  return [...current, ...previous];
}

const within = (flows: Posted[], r: { from: number; to: number }) => flows.filter((f) => f.timestamp >= r.from && f.timestamp < r.to);
const sum = (flows: Posted[], field: 'bytes' | 'packets') => flows.reduce((n, f) => n + f[field], 0);

describe.each(transports)('the analyst API (units, previous period, sankey, completion) on %s', (transport) => {
  let t: TestStack;
  let key: string;
  let strangerKey: string;
  let check: ContractChecker;
  const flows = postedFlows();
  const get = <T>(route: string, headers: Record<string, string> = {}) => t.request<T>('GET', route, { key, headers });
  const checked = (path: string, res: ApiResponse) => expect(check.problems('GET', path, res)).toEqual([]);

  beforeAll(async () => {
    t = await startTestStack(transport, { WORKER_MAX_WAIT_MS: '20' });
    const operator = await t.mintKey({ role: 'operator' });
    key = (await t.mintKey({ role: 'analyst', orgId: operator.org_id })).key;
    strangerKey = (await t.mintKey({ role: 'operator' })).key;
    const ndjson = (rows: object[]) => rows.map((f) => JSON.stringify(f)).join('\n');
    // One recent flow of its own, for completion of a dimension only the raw flows keep (their last hour).
    const recent = { src_ip: '10.0.0.1', dst_ip: '192.0.2.80', protocol: 'tcp', dst_port: 8080, bytes: 10, packets: 1, timestamp: Date.now() - 5 * minute };
    expect((await t.request('POST', '/flow', { key: operator.key, raw: ndjson([...flows, recent]), contentType: 'application/x-ndjson' })).status).toBe(201);
    // Another workspace's flows, recent, with destinations completion must never offer to the first.
    const foreign = [{ src_ip: '10.9.9.9', dst_ip: '172.31.0.1', protocol: 'tcp', dst_port: 8088, bytes: 99, packets: 1, timestamp: Date.now() - 5 * minute }];
    expect((await t.request('POST', '/flow', { key: strangerKey, raw: ndjson(foreign), contentType: 'application/x-ndjson' })).status).toBe(201);
    await waitForTelemetryDrained(t.stack.nats.jsm, t.stack.config.nats.prefix);
    check = new ContractChecker((await t.request<OpenApiDoc>('GET', '/v1/openapi.json')).body);
  });
  afterAll(async () => {
    await t?.stop();
  });

  test('a series in flows a second gives each step its flow count, flows per second as the rate, and keeps bps and pps', async () => {
    const res = await get<FlowSeriesView>(`/v1/telemetry/flows/series?${span}&step=300&unit=flows`);
    expect(res.status).toBe(200);
    checked('/v1/telemetry/flows/series', res);
    expect(res.body.unit).toBe('flows');
    const points = res.body.series[0]!.points;
    expect(points).toHaveLength(4);
    points.forEach((p, i) => {
      const inStep = within(flows, { from: from + i * 5 * minute, to: from + (i + 1) * 5 * minute });
      expect(p).toEqual({
        t: iso(from + i * 5 * minute), bps: (sum(inStep, 'bytes') * 8) / 300, pps: sum(inStep, 'packets') / 300, bytes: sum(inStep, 'bytes'),
        packets: sum(inStep, 'packets'), fps: inStep.length / 300, flows: inStep.length, rate: inStep.length / 300,
      });
    });
  });

  test('a series asked without a unit answers the points as before units existed', async () => {
    const res = await get<FlowSeriesView>(`/v1/telemetry/flows/series?${span}&step=300`);
    expect(Object.keys(res.body.series[0]!.points[0]!)).toEqual(['t', 'bps', 'pps', 'bytes', 'packets']);
    expect(res.body).not.toHaveProperty('unit');
  });

  test('a top-N in packets a second ranks by packets and gives each key its rate over the range', async () => {
    const res = await get<FlowTopView>(`/v1/telemetry/flows/top?${span}&by=dst_ip&unit=packets`);
    expect(res.status).toBe(200);
    checked('/v1/telemetry/flows/top', res);
    const expected = ['172.16.0.1', '172.16.0.2']
      .map((dst) => within(flows, { from, to }).filter((f) => f.dst_ip === dst))
      .map((fs) => ({ dst_ip: fs[0]!.dst_ip, packets: sum(fs, 'packets'), flows: fs.length, rate: sum(fs, 'packets') / 1200 }))
      .sort((a, b) => b.packets - a.packets);
    expect(res.body.data).toEqual(expected);
    expect(res.body.unit).toBe('packets');
  });

  test("a top-N with the previous period gives each current key its value then, zero for a key that carried nothing then", async () => {
    const res = await get<FlowTopView>(`/v1/telemetry/flows/top?${span}&by=dst_ip&unit=bytes&previous=true`);
    expect(res.status).toBe(200);
    checked('/v1/telemetry/flows/top', res);
    expect(res.body.previous_range).toEqual({ from: iso(before.from), to: iso(before.to) });
    for (const row of res.body.data) {
      const then = within(flows, before).filter((f) => f.dst_ip === row.dst_ip);
      expect([row.previous_bytes, row.previous_flows, row.previous_rate]).toEqual([sum(then, 'bytes'), then.length, sum(then, 'bytes') / 1200]);
    }
    expect(res.body.data.find((r) => r.dst_ip === '172.16.0.2')).toMatchObject({ previous_bytes: 0, previous_flows: 0 });
    // 172.16.0.9 carried traffic only before: it is no row of the current ranking.
    expect(res.body.data.map((r) => r.dst_ip)).not.toContain('172.16.0.9');
  });

  test("a split series with the previous period lays the previous steps on the current ones, per key of today's ranking", async () => {
    const res = await get<FlowSeriesView>(`/v1/telemetry/flows/series?${span}&step=600&split_by=dst_ip&limit=2&previous=true&unit=bytes`);
    expect(res.status).toBe(200);
    checked('/v1/telemetry/flows/series', res);
    for (const s of res.body.series) {
      const previous = s.previous!;
      expect(previous.map((p) => [p.t, p.t_previous])).toEqual(s.points.map((p) => [p.t, iso(Date.parse(p.t) - 20 * minute)]));
      const then = within(flows, before).filter((f) => (s.key && 'dst_ip' in s.key ? f.dst_ip === s.key.dst_ip : !['172.16.0.1', '172.16.0.2'].includes(f.dst_ip)));
      expect(previous.reduce((n, p) => n + p.bytes, 0)).toBe(sum(then, 'bytes'));
    }
  });

  test('a sankey of three dimensions is a row per path whose values sum to the total, and its CSV holds the same rows', async () => {
    const query = `/v1/telemetry/flows/top?${span}&by=src_ip,dst_ip,dst_port&totals=all&limit=100`;
    const res = await get<FlowTopView>(query);
    expect(res.status).toBe(200);
    checked('/v1/telemetry/flows/top', res);
    const current = within(flows, { from, to });
    const paths = new Set(current.map((f) => `${f.src_ip}|${f.dst_ip}|${f.dst_port}`));
    expect(res.body.data).toHaveLength(paths.size);
    for (const row of res.body.data) {
      const on = current.filter((f) => f.src_ip === row.src_ip && f.dst_ip === row.dst_ip && f.dst_port === row.dst_port);
      expect([row.bytes, row.packets, row.flows]).toEqual([sum(on, 'bytes'), sum(on, 'packets'), on.length]);
    }
    const csv = await get(query, { accept: 'text/csv' });
    const [header, ...rows] = parseCsv(csv.text);
    expect(header).toEqual(['src_ip', 'dst_ip', 'dst_port', 'bytes', 'packets', 'flows']);
    expect(rows).toEqual(res.body.data.map((r) => header!.map((c) => String(r[c]))));
  });

  test('a series with the previous period comes as CSV with the previous point of each step on its row', async () => {
    const query = `/v1/telemetry/flows/series?${span}&step=600&previous=true&unit=flows`;
    const json = (await get<FlowSeriesView>(query)).body;
    const csv = await get(query, { accept: 'text/csv' });
    const [header, ...rows] = parseCsv(csv.text);
    expect(header).toEqual(['t', 'bps', 'pps', 'bytes', 'packets', 'fps', 'flows', 'rate', 'previous_t', 'previous_bps', 'previous_pps', 'previous_bytes', 'previous_packets', 'previous_fps', 'previous_flows', 'previous_rate']);
    const s = json.series[0]!;
    expect(rows.map((r) => [r[0], r[6], r[8], r[14]])).toEqual(s.points.map((p, i) => [p.t, String(p.flows), s.previous![i]!.t_previous, String(s.previous![i]!.flows)]));
  });

  test("completion offers a dimension's values the workspace's flows carried, most bytes first, and no other workspace's", async () => {
    const res = await get<{ items: Array<{ value: string; label: string; kind: string }> }>('/v1/telemetry/flows/complete?dimension=dst_ip&prefix=172.&limit=10');
    expect(res.status).toBe(200);
    checked('/v1/telemetry/flows/complete', res);
    const last = within(flows, { from: Date.now() - 24 * 60 * minute, to: Date.now() });
    const bytesTo = (dst: string) => sum(last.filter((f) => f.dst_ip === dst), 'bytes');
    const byBytes = [...new Set(last.map((f) => f.dst_ip))].sort((a, b) => bytesTo(b) - bytesTo(a) || (a < b ? -1 : 1));
    expect(res.body.items).toEqual(byBytes.map((v) => ({ value: v, label: v, kind: 'value' })));
    const narrowed = await get<{ items: Array<{ value: string }> }>('/v1/telemetry/flows/complete?dimension=dst_ip&prefix=172.16.0.9');
    expect(narrowed.body.items.map((i) => i.value)).toEqual(['172.16.0.9']);
    const foreign = await get<{ items: unknown[] }>('/v1/telemetry/flows/complete?dimension=dst_ip&prefix=172.31');
    expect(foreign.body.items).toEqual([]);
  });

  test("completion of a dimension no rollup keeps reads the workspace's last hour of raw flows", async () => {
    const res = await get<{ items: Array<{ value: string; kind: string }> }>('/v1/telemetry/flows/complete?dimension=dst_port&prefix=808');
    expect(res.status).toBe(200);
    // 8080 flowed five minutes ago; 8088 is another workspace's.
    expect(res.body.items).toEqual([{ value: '8080', label: '8080', kind: 'value' }]);
  });

  test('completion without a dimension offers the dimension names, then the keywords, that start with the prefix', async () => {
    const names = await get<{ items: Array<{ value: string; kind: string }> }>('/v1/telemetry/flows/complete?prefix=dst_a');
    expect(names.body.items).toEqual([{ value: 'dst_as', label: 'number (AS number)', kind: 'dimension' }]);
    const words = await get<{ items: Array<{ value: string; kind: string }> }>('/v1/telemetry/flows/complete?prefix=i');
    expect(words.body.items.filter((i) => i.kind === 'keyword').map((i) => i.value)).toEqual(['IN', 'ILIKE', 'IUNLIKE']);
    expect(words.body.items.filter((i) => i.kind === 'dimension').every((i) => i.value.startsWith('i'))).toBe(true);
  });

  test('completion of an unknown dimension is 400 naming the parameter', async () => {
    const res = await get<ErrorBody>('/v1/telemetry/flows/complete?dimension=nonsense');
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('VALIDATION_ERROR');
    expect(res.body.error.details?.[0]?.path).toBe('dimension');
  });
});
