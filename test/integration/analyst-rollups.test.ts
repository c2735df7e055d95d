import type { SegmentView, SeriesPointView, SeriesView, TopTalkersView } from '../support/api-types';
import { seededRandom } from '../support/malformed';
import { startTestStack, transports, type TestStack } from '../support/test-stack';
import { waitForTelemetryDrained } from '../support/wait';

/**
 * Top talkers and metric series read the coarsest rollups that answer their
 * range, and stay exact: flows and metric events spread over three hours
 * are posted through the API, and every answer is compared with the sums
 * computed here from what was posted.
 */
const second = 1000;
const minute = 60 * second;
const hour = 60 * minute;
/** "10:00": an hour boundary four hours ago, so the three hours of data are complete. */
const h10 = Math.floor(Date.now() / hour) * hour - 4 * hour;
const at = (h: number, m = 0, s = 0) => h10 + (h - 10) * hour + m * minute + s * second;
const iso = (ms: number) => new Date(ms).toISOString();

type By = 'src_ip' | 'dst_ip' | 'protocol';
type Metric = 'bytes' | 'packets';
interface PostedFlow {
  src_ip: string;
  dst_ip: string;
  protocol: string;
  bytes: number;
  packets: number;
  timestamp: number;
}
interface PostedMetric {
  service: string;
  metric: string;
  value: number;
  region: string;
  timestamp: number;
}

const unaligned = { from: at(10, 3, 17), to: at(12, 48, 41) };

/** Random flows over 10:00–13:00, plus flows on each side of every bound the tests ask for. */
function postedFlows(): PostedFlow[] {
  const rand = seededRandom(1003);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(rand() * items.length)]!;
  const flow = (timestamp: number): PostedFlow => ({
    src_ip: pick(['10.0.0.1', '10.0.0.2', '10.0.0.3', '10.0.1.7', '192.168.4.20', '2001:db8::1']),
    dst_ip: pick(['172.16.0.1', '172.16.0.2', '172.16.0.3', '172.16.5.9', '2001:db8::80']),
    protocol: pick(['tcp', 'udp', 'icmp']),
    bytes: 1 + Math.floor(rand() * 1_000_000),
    packets: 1 + Math.floor(rand() * 1000),
    timestamp,
  });
  const random = Array.from({ length: 1500 }, () => flow(at(10) + Math.floor(rand() * 3 * hour)));
  const bounds = [at(10), at(13), unaligned.from, unaligned.to, at(10, 30, 5), at(10, 30, 50)];
  const edges = bounds.flatMap((b) => [b - 1, b, b + 1]).map(flow);
  return [...random, ...edges];
}

/** Integer values, so sums and averages are exact on both sides. */
function postedMetrics(): PostedMetric[] {
  const rand = seededRandom(2024);
  const event = (timestamp: number) => ({ service: 'edge', metric: 'queue_depth', value: 1 + Math.floor(rand() * 900), region: 'eu', timestamp });
  return [...Array.from({ length: 400 }, () => event(at(10) + Math.floor(rand() * 3 * hour))), event(at(10) - 1), event(at(13))];
}

/** The top-talker rows the API must answer: sums by key over [from, to), by value desc then key. */
function expectedTop(flows: PostedFlow[], by: By, metric: Metric, range: { from: number; to: number }) {
  const sums = new Map<string, { value: number; flows: number }>();
  for (const f of flows.filter((x) => x.timestamp >= range.from && x.timestamp < range.to)) {
    const s = sums.get(f[by]) ?? { value: 0, flows: 0 };
    sums.set(f[by], { value: s.value + f[metric], flows: s.flows + 1 });
  }
  return [...sums.entries()]
    .sort(([ka, a], [kb, b]) => b.value - a.value || (ka < kb ? -1 : 1))
    .map(([key, s]) => ({ [by]: key, [metric]: s.value, flows: s.flows }));
}

/** The series points the API must answer: per step, the average of the events in it. */
function expectedSeries(events: PostedMetric[], stepMs: number, range: { from: number; to: number }): SeriesPointView[] {
  const steps = new Map<number, { total: number; samples: number }>();
  for (const e of events.filter((x) => x.timestamp >= range.from && x.timestamp < range.to)) {
    const t = Math.floor(e.timestamp / stepMs) * stepMs;
    const s = steps.get(t) ?? { total: 0, samples: 0 };
    steps.set(t, { total: s.total + e.value, samples: s.samples + 1 });
  }
  return [...steps.entries()].sort(([a], [b]) => a - b).map(([t, s]) => ({ t: iso(t), avg: s.total / s.samples, samples: s.samples }));
}

const segment = (from: number, to: number, resolution: SegmentView['resolution']): SegmentView => ({ from: iso(from), to: iso(to), resolution });
const dimensions: Array<[By, Metric]> = [
  ['src_ip', 'bytes'],
  ['dst_ip', 'packets'],
  ['protocol', 'bytes'],
];

describe.each(transports)('analyst queries over rollups on %s', (transport) => {
  let t: TestStack;
  let key: string;
  const flows = postedFlows();
  const metrics = postedMetrics();
  const top = (by: By, metric: Metric, range: { from: number; to: number }) =>
    t.request<TopTalkersView<By, Metric>>('GET', `/v1/telemetry/flows/top?by=${by}&metric=${metric}&limit=1000&from=${range.from}&to=${range.to}`, { key });
  const series = (step: number, range: { from: number; to: number }) =>
    t.request<SeriesView>('GET', `/v1/telemetry/metrics/series?service=edge&metric=queue_depth&step=${step}&from=${range.from}&to=${range.to}`, { key });

  beforeAll(async () => {
    t = await startTestStack(transport, { WORKER_MAX_WAIT_MS: '20' });
    key = (await t.mintKey({ role: 'operator' })).key;
    const posted = await t.request('POST', '/flow', { key, raw: flows.map((f) => JSON.stringify(f)).join('\n'), contentType: 'application/x-ndjson' });
    expect(posted.status).toBe(201);
    expect((await t.request('POST', '/v1/ingest/events', { key, body: metrics })).status).toBe(202);
    await waitForTelemetryDrained(t.stack.nats.jsm, t.stack.config.nats.prefix);
    // The flows' buckets have closed: folded, they are read from the 5-minute and hourly levels (storage/rollup-fold.ts).
    await t.stack.rollupFolder!.settle();
  });
  afterAll(async () => {
    await t.stop();
  });

  test.each(dimensions)('top talkers by %s (%s) over whole hours equal the posted sums and are read from the hourly rollup alone', async (by, metric) => {
    const range = { from: at(10), to: at(13) };
    const res = await top(by, metric, range);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ data: expectedTop(flows, by, metric, range), resolution: '1h', segments: [segment(at(10), at(13), '1h')] });
  });

  test.each(dimensions)('top talkers by %s (%s) from 10:03:17 to 12:48:41 equal the posted sums to the millisecond, read from every resolution', async (by, metric) => {
    const res = await top(by, metric, unaligned);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      data: expectedTop(flows, by, metric, unaligned),
      resolution: '1h',
      segments: [
        segment(unaligned.from, at(10, 4), 'raw'),
        segment(at(10, 4), at(10, 5), '1m'),
        segment(at(10, 5), at(11), '5m'),
        segment(at(11), at(12), '1h'),
        segment(at(12), at(12, 45), '5m'),
        segment(at(12, 45), at(12, 48), '1m'),
        segment(at(12, 48), unaligned.to, 'raw'),
      ],
    });
  });

  test('top talkers over less than a minute equal the posted sums and are read from the raw flows alone', async () => {
    const range = { from: at(10, 30, 5), to: at(10, 30, 50) };
    const res = await top('dst_ip', 'bytes', range);
    expect(res.body).toEqual({ data: expectedTop(flows, 'dst_ip', 'bytes', range), resolution: 'raw', segments: [segment(range.from, range.to, 'raw')] });
  });

  test('a metric series with a one-hour step over whole hours reads the hourly rollup and averages each hour', async () => {
    const range = { from: at(10), to: at(13) };
    const res = await series(3600, range);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ data: expectedSeries(metrics, hour, range), resolution: '1h' });
    expect(res.body.data.map((p) => p.t)).toEqual([iso(at(10)), iso(at(11)), iso(at(12))]);
  });

  test('a metric series with a one-hour step from 10:05 reads the 5-minute rollup and averages what each hour holds of the range', async () => {
    const range = { from: at(10, 5), to: at(13) };
    const res = await series(3600, range);
    expect(res.body).toEqual({ data: expectedSeries(metrics, hour, range), resolution: '5m' });
  });
});
