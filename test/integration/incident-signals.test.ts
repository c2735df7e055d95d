import type { ErrorBody, IncidentSignalView, IncidentView, Page } from '../support/api-types';
import { startTestStack, transports, type TestStack } from '../support/test-stack';
import { waitFor } from '../support/wait';
import { orgIs, storedCount } from '../support/stored-count';

const minute = 60_000;
const key = { service: 'payments', environment: 'prod', region: 'eu-west-1' };

/** Posts signals of one correlation key at these offsets (ms) from `base`, one kind each in turn. */
async function postSignals(t: TestStack, apiKey: string, base: number, offsets: number[]): Promise<void> {
  const kinds = ['flow', 'bgp', 'dns'] as const;
  const records = offsets.map((offset, i) => ({
    ...key,
    telemetry: kinds[i % kinds.length],
    timestamp: base + offset,
    latency_ms: 10 * (i + 1),
    ...(i === 0 ? { src_ip: '10.1.0.1', dst_ip: '10.1.0.2', dst_port: 443, asn: 64500, bytes: 900 } : {}),
  }));
  const res = await t.request('POST', '/ingest', { key: apiKey, body: records });
  expect(res.status).toBe(202);
}

async function incidentsOf(t: TestStack, apiKey: string, count: number): Promise<IncidentView[]> {
  return waitFor(async () => {
    const res = await t.request<Page<IncidentView>>('GET', '/v1/incidents', { key: apiKey });
    return res.body.data.length === count ? res.body.data : undefined;
  }, 20_000, `${count} incidents`);
}

async function allSignals(t: TestStack, apiKey: string, id: string, limit: number): Promise<{ pages: number; signals: IncidentSignalView[] }> {
  const signals: IncidentSignalView[] = [];
  let cursor: string | null = null;
  let pages = 0;
  do {
    const query: string = `limit=${limit}${cursor ? `&cursor=${cursor}` : ''}`;
    const res: { status: number; body: Page<IncidentSignalView> } = await t.request<Page<IncidentSignalView>>('GET', `/v1/incidents/${id}/signals?${query}`, { key: apiKey });
    expect(res.status).toBe(200);
    signals.push(...res.body.data);
    cursor = res.body.next_cursor;
    pages += 1;
  } while (cursor);
  return { pages, signals };
}

describe.each(transports)("an incident's signals on %s", (transport) => {
  let t: TestStack;
  beforeAll(async () => {
    t = await startTestStack(transport, { WORKER_MAX_WAIT_MS: '100' });
  });
  afterAll(async () => {
    await t.stop();
  });

  test('lists the signals of each incident in event-time order, and only its own', async () => {
    const { key: apiKey } = await t.mintKey({ role: 'operator' });
    const base = Date.now() - 60 * minute;
    // Two runs of the same key, 20 minutes apart: two incidents (the window is 5 minutes).
    await postSignals(t, apiKey, base, [2 * minute, 0, minute, 20 * minute, 21 * minute]);
    const [later, earlier] = await incidentsOf(t, apiKey, 2);
    const first = await allSignals(t, apiKey, earlier!.id, 100);
    expect(first.signals.map((s) => Date.parse(s.timestamp) - base)).toEqual([0, minute, 2 * minute]);
    expect(first.signals.map((s) => s.telemetry)).toEqual(['bgp', 'dns', 'flow']);
    const second = await allSignals(t, apiKey, later!.id, 100);
    expect(second.signals.map((s) => Date.parse(s.timestamp) - base)).toEqual([20 * minute, 21 * minute]);
    expect(first.signals.length).toBe(earlier!.signal_count);
  });

  test("a signal's optional fields read null when the record did not carry them", async () => {
    const { key: apiKey } = await t.mintKey({ role: 'operator' });
    await postSignals(t, apiKey, Date.now() - 30 * minute, [0, 1000]);
    const [incident] = await incidentsOf(t, apiKey, 1);
    const { signals } = await allSignals(t, apiKey, incident!.id, 100);
    expect(signals[0]).toMatchObject({ telemetry: 'flow', src_ip: '10.1.0.1', dst_ip: '10.1.0.2', dst_port: 443, asn: 64500, bytes: 900, latency_ms: 10, rule: null });
    expect(signals[1]).toMatchObject({ telemetry: 'bgp', src_ip: null, dst_ip: null, dst_port: null, asn: null, bytes: 0, latency_ms: 20 });
  });

  test('pages walk every signal once, in order, however small the page', async () => {
    const { key: apiKey } = await t.mintKey({ role: 'operator' });
    const base = Date.now() - 40 * minute;
    // Pairs at the same event time: the cursor must break ties by event id.
    const offsets = [0, 0, 1000, 1000, 2000, 3000, 3000];
    await postSignals(t, apiKey, base, offsets);
    const [incident] = await incidentsOf(t, apiKey, 1);
    const { pages, signals } = await allSignals(t, apiKey, incident!.id, 2);
    expect(pages).toBe(4);
    expect(signals.map((s) => Date.parse(s.timestamp) - base)).toEqual(offsets);
    expect(new Set(signals.map((s) => s.event_id)).size).toBe(offsets.length);
  });

  test('a signal stored twice (a retry past the duplicate window) is listed once, as the incident counts it', async () => {
    const { key: apiKey, org_id: orgId } = await t.mintKey({ role: 'operator' });
    await postSignals(t, apiKey, Date.now() - 20 * minute, [0, 1000, 2000]);
    const [incident] = await incidentsOf(t, apiKey, 1);
    const db = t.stack.clickhouse.database;
    await t.stack.clickhouse.exec(`INSERT INTO ${db}.signals SELECT * FROM ${db}.signals WHERE org_id = '${orgId}' ORDER BY ts LIMIT 1`);
    expect(await storedCount(t.stack.clickhouse, 'signals', orgIs(orgId))).toBe(4);
    const { signals } = await allSignals(t, apiKey, incident!.id, 100);
    expect(signals.map((s) => Date.parse(s.timestamp) - Date.parse(incident!.first_seen))).toEqual([0, 1000, 2000]);
  });

  test("another workspace's key gets 404 for the incident's signals", async () => {
    const { key: owner } = await t.mintKey({ role: 'operator' });
    const { key: stranger } = await t.mintKey({ role: 'operator' });
    await postSignals(t, owner, Date.now() - 10 * minute, [0]);
    const [incident] = await incidentsOf(t, owner, 1);
    const res = await t.request<ErrorBody>('GET', `/v1/incidents/${incident!.id}/signals`, { key: stranger });
    expect(res.status).toBe(404);
    expect(res.body.error.code).toBe('NOT_FOUND');
  });

  test('a cursor the endpoint did not issue is refused with 400', async () => {
    const { key: apiKey } = await t.mintKey({ role: 'operator' });
    await postSignals(t, apiKey, Date.now() - 10 * minute, [0]);
    const [incident] = await incidentsOf(t, apiKey, 1);
    const res = await t.request<ErrorBody>('GET', `/v1/incidents/${incident!.id}/signals?cursor=bm90LWEtY3Vyc29y`, { key: apiKey });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('VALIDATION_ERROR');
  });
});
