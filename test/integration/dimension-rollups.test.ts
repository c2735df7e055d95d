import { RollupFold } from '../../storage/rollup-fold';
import { str } from '../../storage/sql';
import { TelemetryStore } from '../../storage/telemetry-store';
import { seededRandom } from '../support/malformed';
import { startTestStack, transports, type TestStack } from '../support/test-stack';

/**
 * Top-N and series on the analysts' dimensions over more than the raw
 * flows' 7 days, answered by the dimension rollups (flows_dims_1h and
 * flows_dims_5m, folded from the raw flows once their buckets closed) and
 * the raw flows at the edges, with the same numbers as the raw flows
 * over the few hours that hold the flows, and as the sums computed here. Interface names are joined in over a rollup as
 * over the raw flows. On both ClickHouse generations.
 */
const hour = 3_600_000;
const day = 24 * hour;
/** The end of the flows' three hours: an hour boundary an hour ago, so every rollup holds them. */
const end = Math.floor(Date.now() / hour) * hour - hour;
const short = { from: end - 3 * hour, to: end };
const long = { from: end - 20 * day, to: end };
/** Eight days ending half an hour into the flows' second hour: its edges are not whole hours, the later one holds flows. */
const eightDays = { from: end - 90 * 60_000 - 8 * day, to: end - 90 * 60_000 };

interface StoredFlow {
  ts: number;
  src_ip: string;
  dst_ip: string;
  src_port: number;
  dst_port: number;
  protocol: string;
  bytes: number;
  packets: number;
  exporter: string;
  in_if: number;
  out_if: number;
  src_as: number;
  dst_as: number;
  src_country: string;
  dst_country: string;
}

const interfaceNames: Record<string, string> = { '192.0.2.1 1': 'et-0/0/1', '192.0.2.1 2': 'et-0/0/2', '2001:db8::7 1': 'xe-1/0/1' };

function storedFlows(): StoredFlow[] {
  const rand = seededRandom(48);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(rand() * items.length)]!;
  return Array.from({ length: 900 }, () => ({
    ts: short.from + Math.floor(rand() * 3 * hour),
    src_ip: `10.0.${pick([0, 1, 2])}.${1 + Math.floor(rand() * 200)}`,
    dst_ip: pick(['172.16.0.1', '172.16.0.2', '2001:db8::80']),
    src_port: 1024 + Math.floor(rand() * 60_000),
    dst_port: pick([53, 80, 443]),
    protocol: pick(['tcp', 'udp']),
    bytes: 40 + Math.floor(rand() * 1_000_000),
    packets: 1 + Math.floor(rand() * 1000),
    exporter: pick(['192.0.2.1', '2001:db8::7']),
    in_if: pick([1, 2, 3]),
    out_if: pick([1, 2]),
    src_as: pick([13335, 15169, 3320, 0]),
    dst_as: pick([64512, 64513]),
    src_country: pick(['US', 'DE', 'FR', '']),
    dst_country: pick(['NL', 'GB', '']),
  }));
}

type Dim = 'src_as' | 'dst_country' | 'in_if_name';
const valueOf = (f: StoredFlow, by: Dim): string | number | null => {
  if (by === 'in_if_name') return interfaceNames[`${f.exporter} ${f.in_if}`] ?? null;
  return by === 'dst_country' ? f.dst_country || null : f.src_as;
};

/** The rows top-N must answer: bytes and flows by key, bytes descending. */
function expectedTop(flows: StoredFlow[], by: Dim) {
  const sums = new Map<string | number | null, { bytes: number; flows: number }>();
  for (const f of flows) {
    const s = sums.get(valueOf(f, by)) ?? { bytes: 0, flows: 0 };
    sums.set(valueOf(f, by), { bytes: s.bytes + f.bytes, flows: s.flows + 1 });
  }
  return [...sums.entries()].sort(([, a], [, b]) => b.bytes - a.bytes).map(([key, s]) => ({ [by]: key, ...s }));
}

interface TopAnswer {
  data: Array<Record<string, unknown>>;
  resolution: string;
  segments: Array<{ resolution: string }>;
}

describe.each(transports)('the dimension rollups answer analysts on %s', (transport) => {
  let t: TestStack;
  let key: string;
  const flows = storedFlows();
  /** Top-N as the API answers it, each row cut to its key, bytes and flows. */
  const top = async (by: Dim, range: { from: number; to: number }, filter?: string) => {
    const q = `by=${by}&metric=bytes&limit=100&from=${range.from}&to=${range.to}${filter ? `&filter=${encodeURIComponent(filter)}` : ''}`;
    const res = await t.request<TopAnswer>('GET', `/v1/telemetry/flows/top?${q}`, { key });
    expect(res.status).toBe(200);
    return { ...res.body, data: res.body.data.map((r) => ({ [by]: r[by], bytes: r.bytes, flows: r.flows })) };
  };

  beforeAll(async () => {
    t = await startTestStack(transport, { ROLES: 'api' });
    const minted = await t.mintKey({ role: 'operator' });
    key = minted.key;
    const orgId = minted.org_id;
    const rows = flows.map((f, i) => JSON.stringify({ org_id: orgId, event_id: `evt_${i}`, received_at: f.ts, ...f }));
    await new TelemetryStore(t.stack.clickhouse).insert('flows', rows.join('\n') + '\n');
    const ifRows = Object.entries(interfaceNames).map(([k, name]) => {
      const [exporter, index] = k.split(' ');
      return JSON.stringify({ org_id: orgId, exporter, if_index: Number(index), name, description: '', speed: 1000, source: 'static', version: 1 });
    });
    await t.stack.clickhouse.insertJsonEachRow('exporter_interfaces', ifRows.join('\n') + '\n');
    const [stored] = await t.stack.clickhouse.query<{ n: string }>(`SELECT count() AS n FROM ${t.stack.clickhouse.database}.flows WHERE org_id = ${str(orgId)}`);
    expect(Number(stored!.n)).toBe(flows.length);
    // The flows' buckets closed an hour ago: the fold the stream workers run brings them into both levels.
    expect(await new RollupFold(t.stack.clickhouse).foldAll()).toBeGreaterThan(0);
  });
  afterAll(async () => {
    await t.stop();
  });

  test.each<Dim>(['src_as', 'dst_country', 'in_if_name'])('top-N by %s over 20 days is read from the hourly dimension rollup and equals the stored sums', async (by) => {
    const answer = await top(by, long);
    expect(answer.resolution).toBe('1h');
    expect(answer.segments.map((s) => s.resolution)).toEqual(['1h']);
    expect(answer.data).toEqual(expectedTop(flows, by));
  });

  test.each<Dim>(['src_as', 'dst_country', 'in_if_name'])('top-N by %s over 20 days equals the raw flows over the three hours that hold them', async (by) => {
    // A filter on ports only the raw flows answer, true of every flow, sends the short range to the raw flows.
    const raw = await top(by, short, 'src_port >= 0');
    expect(raw.segments.map((s) => s.resolution)).toEqual(['raw']);
    expect((await top(by, long)).data).toEqual(raw.data);
  });

  test('top-N by src_as over 8 days reads the hourly dimension rollup and its half-hour edges from the 5-minute one, with the raw flows\' numbers', async () => {
    const answer = await top('src_as', eightDays);
    expect(answer.segments.map((s) => s.resolution)).toEqual(['5m', '1h', '5m']);
    const raw = await top('src_as', { from: short.from, to: eightDays.to }, 'src_port >= 0');
    expect(raw.segments.map((s) => s.resolution)).toEqual(['raw']);
    expect(answer.data).toEqual(raw.data);
    expect(answer.data).toEqual(expectedTop(flows.filter((f) => f.ts < eightDays.to), 'src_as'));
  });

  test('a filter on an AS and an interface name over 20 days is answered by the dimension rollup', async () => {
    const answer = await top('dst_country', long, "src_as = AS13335 AND in_if_name = 'et-0/0/1'");
    expect(answer.resolution).toBe('1h');
    const kept = flows.filter((f) => f.src_as === 13335 && valueOf(f, 'in_if_name') === 'et-0/0/1');
    expect(answer.data).toEqual(expectedTop(kept, 'dst_country'));
  });

  test('a series split by source country over 20 days sums, step by step, to the flows of each country', async () => {
    const q = `split_by=src_country&limit=10&step=86400&from=${long.from}&to=${long.to}`;
    const res = await t.request<{ resolution: string; series: Array<{ key: unknown; points: Array<{ bytes: number }> }> }>('GET', `/v1/telemetry/flows/series?${q}`, { key });
    expect(res.status).toBe(200);
    expect(res.body.resolution).toBe('1h');
    const totals = Object.fromEntries(res.body.series.map((s) => [JSON.stringify(s.key), s.points.reduce((n, p) => n + p.bytes, 0)]));
    const expected: Record<string, number> = { [JSON.stringify({ other: true })]: 0 };
    for (const f of flows) {
      const k = JSON.stringify({ src_country: f.src_country || null });
      expected[k] = (expected[k] ?? 0) + f.bytes;
    }
    expect(totals).toEqual(expected);
  });

  test('a series split by source country at 5-minute steps over 3 days reads the 5-minute dimension rollup and sums to each country', async () => {
    const q = `split_by=src_country&limit=10&step=300&from=${end - 3 * day}&to=${end}`;
    const res = await t.request<{ resolution: string; series: Array<{ key: unknown; points: Array<{ bytes: number }> }> }>('GET', `/v1/telemetry/flows/series?${q}`, { key });
    expect(res.status).toBe(200);
    expect(res.body.resolution).toBe('5m');
    const totals = Object.fromEntries(res.body.series.map((s) => [JSON.stringify(s.key), s.points.reduce((n, p) => n + p.bytes, 0)]));
    const expected: Record<string, number> = { [JSON.stringify({ other: true })]: 0 };
    for (const f of flows) expected[JSON.stringify({ src_country: f.src_country || null })] = (expected[JSON.stringify({ src_country: f.src_country || null })] ?? 0) + f.bytes;
    expect(totals).toEqual(expected);
  });

  test('a series on a dimension at 7-minute steps over more than the raw flows\' 7 days is refused, naming the step', async () => {
    const res = await t.request<{ error: { code: string; message: string } }>('GET', `/v1/telemetry/flows/series?split_by=src_as&step=420&from=${eightDays.from}&to=${eightDays.to}`, { key });
    expect(res.status).toBe(400);
    expect(res.body.error.message).toMatch(/at most 7 days .*keeps buckets of 5 minutes at the finest, not steps of 7 minutes/);
  });

  test('top-N by source address over 20 days is still refused: addresses are kept by no rollup with the dimensions', async () => {
    const res = await t.request('GET', `/v1/telemetry/flows/top?by=src_ip,src_as&from=${long.from}&to=${long.to}`, { key });
    expect(res.status).toBe(400);
  });
});
