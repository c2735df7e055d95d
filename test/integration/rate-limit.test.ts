import { startTestStack, type TestStack } from '../support/test-stack';

/** `expect.stringContaining(text)`, typed as what it is to the compiler: a value to compare with. */
const stringContaining = (text: string): unknown => expect.stringContaining(text);

const flows = (n: number) =>
  Array.from({ length: n }, (_, i) => JSON.stringify({ src_ip: '192.0.2.1', dst_ip: '192.0.2.2', bytes: i, packets: 1, protocol: 'tcp' })).join('\n');

describe('per-workspace rate limits', () => {
  let t: TestStack;
  beforeAll(async () => {
    t = await startTestStack('chdb', { ROLES: 'api', RATE_LIMIT_RECORDS_PER_SECOND: '100', RATE_LIMIT_BURST_SECONDS: '2' });
  });
  afterAll(async () => {
    await t.stop();
  });

  test('a workspace over its record rate gets 429 RATE_LIMITED with Retry-After, and another workspace does not', async () => {
    const a = await t.mintKey({ role: 'ingest' });
    const b = await t.mintKey({ role: 'ingest' });
    const first = await t.request('POST', '/flow', { key: a.key, raw: flows(150), contentType: 'application/x-ndjson' });
    expect(first.status).toBe(201);
    const second = await t.request('POST', '/flow', { key: a.key, raw: flows(150), contentType: 'application/x-ndjson' });
    expect(second.status).toBe(429);
    expect(second.body).toEqual({ error: { code: 'RATE_LIMITED', message: stringContaining('100') } });
    expect(Number(second.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    const other = await t.request('POST', '/flow', { key: b.key, raw: flows(150), contentType: 'application/x-ndjson' });
    expect(other.status).toBe(201);
  });

  test('records refused by validation do not count against the rate', async () => {
    const a = await t.mintKey({ role: 'ingest' });
    const bad = flows(150).replace('"192.0.2.1"', '"not-an-address"');
    expect((await t.request('POST', '/flow', { key: a.key, raw: bad, contentType: 'application/x-ndjson' })).status).toBe(400);
    expect((await t.request('POST', '/flow', { key: a.key, raw: flows(150), contentType: 'application/x-ndjson' })).status).toBe(201);
  });
});

