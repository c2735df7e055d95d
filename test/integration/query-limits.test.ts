import { randomBytes } from 'node:crypto';
import type { AuditVerifyView, ErrorBody, IncidentView, Page } from '../support/api-types';
import { ContractChecker, type OpenApiDoc } from '../support/openapi-check';
import { startTestStack, transports, type ApiResponse, type TestStack } from '../support/test-stack';
import { waitFor, waitForTelemetryDrained } from '../support/wait';

/**
 * Expensive work on demand: analysts' queries run under ClickHouse's limits
 * (made small here, on both generations), their cost and audit
 * verification's are paid from a per-key budget, a replay's window is
 * capped, and audit verification checks a bounded number of entries a call.
 */
const hour = 3_600_000;
const stringContaining = (text: string): unknown => expect.stringContaining(text);

/** `count` flows within one closed hour, each with a port of its own: a 3-dimension top-N reads every raw flow. */
function flowsOf(count: number, from: number): string {
  return Array.from({ length: count }, (_, i) =>
    JSON.stringify({
      src_ip: '10.0.0.1', dst_ip: `172.16.0.${1 + (i % 3)}`, src_port: 1024 + i, dst_port: 443, protocol: 'tcp',
      bytes: 100 + i, packets: 1, timestamp: from + Math.floor((i / count) * hour),
    }),
  ).join('\n');
}

describe.each(transports)('the engine limits of analysts\' queries on %s', (transport) => {
  let t: TestStack;
  let key: string;
  const from = Math.floor(Date.now() / hour) * hour - 2 * hour;
  const range = `from=${from}&to=${from + hour}`;
  const flowCount = 20_000;

  beforeAll(async () => {
    // Above a granule (8192 rows): 18.16 counts the granules it plans to read, the rollups' one included.
    t = await startTestStack(transport, { ANALYTICS_MAX_ROWS_TO_READ: '10000' });
    key = (await t.mintKey({ role: 'operator' })).key;
    const posted = await t.request('POST', '/flow', { key, raw: flowsOf(flowCount, from), contentType: 'application/x-ndjson' });
    expect(posted.status).toBe(201);
    await waitForTelemetryDrained(t.stack.nats.jsm, t.stack.config.nats.prefix);
  });
  afterAll(async () => {
    await t?.stop();
  });

  test('a top-N that would read more raw flows than max_rows_to_read is 422 QUERY_TOO_EXPENSIVE naming the limit and how to narrow it', async () => {
    const res = await t.request<ErrorBody>('GET', `/v1/telemetry/flows/top?by=src_port,dst_ip,protocol&${range}`, { key });
    expect(res.status).toBe(422);
    expect(res.body).toEqual({ error: { code: 'QUERY_TOO_EXPENSIVE', message: stringContaining('max_rows_to_read: 10,000 rows') } });
    expect(res.body.error.message).toContain('narrow the time range');
    const check = new ContractChecker((await t.request<OpenApiDoc>('GET', '/v1/openapi.json')).body);
    expect(check.problems('GET', '/v1/telemetry/flows/top', res)).toEqual([]);
  });

  test('the same range grouped by a dimension a rollup keeps is answered', async () => {
    const res = await t.request<{ data: Array<{ dst_ip: string; flows: number }> }>('GET', `/v1/telemetry/flows/top?by=dst_ip&${range}`, { key });
    expect(res.status).toBe(200);
    expect(res.body.data.reduce((n, r) => n + r.flows, 0)).toBe(flowCount);
  });
});

describe('budgets and caps', () => {
  let t: TestStack;

  beforeAll(async () => {
    t = await startTestStack('chdb', {
      QUERY_BUDGET_UNITS_PER_MINUTE: '1',
      QUERY_BUDGET_BURST_UNITS: '10',
      AUDIT_VERIFY_MAX_ENTRIES: '3',
      REPLAY_MAX_WINDOW_MINUTES: '60',
      WORKER_MAX_WAIT_MS: '20',
    });
  });
  afterAll(async () => {
    await t?.stop();
  });

  const series = '/v1/telemetry/metrics/series?service=edge&metric=latency_ms';

  test("a workspace past its query budget gets 429 RATE_LIMITED with Retry-After on every key of it, and another workspace does not", async () => {
    const spender = await t.mintKey({ role: 'analyst' });
    const other = await t.mintKey({ role: 'analyst', orgId: spender.org_id });
    const stranger = await t.mintKey({ role: 'analyst' });
    for (let i = 0; i < 10; i += 1) expect((await t.request('GET', series, { key: spender.key })).status).toBe(200);
    const refused = await t.request<ErrorBody>('GET', series, { key: spender.key });
    expect(refused.status).toBe(429);
    expect(refused.body).toEqual({ error: { code: 'RATE_LIMITED', message: stringContaining('query budget') } });
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(30);
    const check = new ContractChecker((await t.request<OpenApiDoc>('GET', '/v1/openapi.json')).body);
    expect(check.problems('GET', '/v1/telemetry/metrics/series', refused)).toEqual([]);
    // A second key of the workspace buys no more budget; another workspace has its own.
    expect((await t.request('GET', series, { key: other.key })).status).toBe(429);
    expect((await t.request('GET', series, { key: stranger.key })).status).toBe(200);
  });

  test('a 7-day query on the raw flows costs more of the budget than one on the rollups', async () => {
    const key = (await t.mintKey({ role: 'analyst' })).key;
    const to = Date.now();
    const week = `from=${to - 7 * 24 * hour}&to=${to}`;
    // 1 + 4 units a day: 29 units, over the 10 a key holds; it passes only on a full budget and leaves it in debt.
    expect((await t.request('GET', `/v1/telemetry/flows/top?by=src_port,dst_port,exporter&${week}`, { key })).status).toBe(200);
    expect((await t.request('GET', `/v1/telemetry/flows/top?by=dst_ip&${week}`, { key })).status).toBe(429);
  });

  test('audit verification is paid from the same budget', async () => {
    const key = (await t.mintKey({ role: 'operator' })).key;
    for (let i = 0; i < 10; i += 1) await t.request('GET', series, { key });
    const refused = await t.request<ErrorBody>('GET', '/v1/audit/verify', { key });
    expect(refused.status).toBe(429);
    expect(refused.body.error.code).toBe('RATE_LIMITED');
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
  });

  test('audit verification checks at most AUDIT_VERIFY_MAX_ENTRIES a call, and its cursor goes on to the end of a whole chain', async () => {
    const admin = await t.mintKey({ role: 'admin' });
    for (let i = 0; i < 5; i += 1) {
      expect((await t.request('POST', '/v1/policies', { key: admin.key, body: { name: `p${i}`, requires_approval: false } })).status).toBe(201);
    }
    const ledger = await t.request<Page<unknown>>('GET', '/v1/audit?limit=1000', { key: admin.key });
    const check = new ContractChecker((await t.request<OpenApiDoc>('GET', '/v1/openapi.json')).body);
    const pages: AuditVerifyView[] = [];
    let cursor: string | null = null;
    do {
      const res: ApiResponse<AuditVerifyView> = await t.request<AuditVerifyView>('GET', `/v1/audit/verify${cursor ? `?cursor=${cursor}` : ''}`, { key: admin.key });
      expect([res.status, check.problems('GET', '/v1/audit/verify', res)]).toEqual([200, []]);
      pages.push(res.body);
      cursor = res.body.next_cursor;
    } while (cursor && pages.length < 10);
    expect(pages.every((p) => p.valid && p.entries <= 3)).toBe(true);
    expect(pages.map((p) => p.complete)).toEqual([...pages.slice(1).map(() => false), true]);
    expect(pages.reduce((n, p) => n + p.entries, 0)).toBe(ledger.body.data.length);
    const tooMany = await t.request<ErrorBody>('GET', '/v1/audit/verify?max_entries=4', { key: admin.key });
    expect(tooMany.status).toBe(400);
    expect(tooMany.body.error.message).toContain('AUDIT_VERIFY_MAX_ENTRIES');
  });

  test('a replay window over REPLAY_MAX_WINDOW_MINUTES is 400 naming the cap, and one within it is queued', async () => {
    const { key } = await t.mintKey({ role: 'operator' });
    const signal = { telemetry: 'bgp', service: 'edge', environment: 'prod', region: 'eu-west-1', asn: 64500, latency_ms: 40 };
    expect((await t.request('POST', '/ingest', { key, body: signal })).status).toBe(202);
    const incidents = () => t.request<Page<IncidentView>>('GET', '/v1/incidents', { key });
    const incident = (await waitFor(async () => (await incidents()).body.data[0], 20_000, 'the incident')).id;
    const over = await t.request<ErrorBody>('POST', '/v1/replay', { key, body: { incident_id: incident, window_minutes: 61 } });
    expect(over.status).toBe(400);
    expect(over.body.error).toMatchObject({ code: 'VALIDATION_ERROR', message: stringContaining('at most 60 (REPLAY_MAX_WINDOW_MINUTES)') });
    expect(over.body.error.details?.map((d) => d.path)).toEqual(['window_minutes']);
    expect((await t.request('POST', '/v1/replay', { key, body: { incident_id: incident, window_minutes: 60 } })).status).toBe(202);
  });
});

describe('one query budget per workspace across API processes', () => {
  let first: TestStack;
  let second: TestStack;

  beforeAll(async () => {
    // Two api processes on one NATS prefix and one database, as behind a load balancer.
    const id = randomBytes(5).toString('hex');
    const shared = {
      ROLES: 'api',
      NATS_PREFIX: `tq${id}`,
      CLICKHOUSE_DATABASE: `t_q${id}`,
      DECISION_SIGNING_KEY: randomBytes(32).toString('base64url'),
      AUDIT_CHAIN_KEY: randomBytes(32).toString('base64url'),
      QUERY_BUDGET_UNITS_PER_MINUTE: '1',
      QUERY_BUDGET_BURST_UNITS: '4',
    };
    first = await startTestStack('clickhouse-server', shared);
    second = await startTestStack('clickhouse-server', shared);
  }, 120_000);
  afterAll(async () => {
    await second?.stop();
    await first?.stop();
  });

  test('two keys of one workspace, each on its own API process, spend one budget', async () => {
    const series = '/v1/telemetry/metrics/series?service=edge&metric=latency_ms';
    const one = await first.mintKey({ role: 'analyst' });
    const two = await first.mintKey({ role: 'analyst', orgId: one.org_id });
    const stranger = await first.mintKey({ role: 'analyst' });
    for (let i = 0; i < 2; i += 1) expect((await first.request('GET', series, { key: one.key })).status).toBe(200);
    for (let i = 0; i < 2; i += 1) expect((await second.request('GET', series, { key: two.key })).status).toBe(200);
    expect((await second.request('GET', series, { key: two.key })).status).toBe(429);
    expect((await first.request('GET', series, { key: one.key })).status).toBe(429);
    expect((await second.request('GET', series, { key: stranger.key })).status).toBe(200);
  });
});
