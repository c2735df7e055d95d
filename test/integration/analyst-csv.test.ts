import type { ErrorBody, FlowSeriesView, FlowTopView } from '../support/api-types';
import { parseCsv } from '../support/csv';
import { ContractChecker, type OpenApiDoc } from '../support/openapi-check';
import { startTestStack, transports, type ApiResponse, type TestStack } from '../support/test-stack';
import { waitForTelemetryDrained } from '../support/wait';

/**
 * `Accept: text/csv` on the analysts' top-N and series routes, through HTTP
 * on the real stack: the CSV's rows are the JSON's rows, field for field,
 * the answer is what the OpenAPI document declares, and errors stay JSON.
 */
const minute = 60_000;
const from = Math.floor(Date.now() / minute) * minute - 30 * minute;
const span = `from=${from}&to=${from + 20 * minute}`;
const csvAccept = { accept: 'text/csv' };
/** A JSON value as the CSV writes it. */
const cell = (v: string | number | boolean | null | undefined) => (v === null || v === undefined ? '' : String(v));

describe.each(transports)('CSV answers of the analyst API on %s', (transport) => {
  let t: TestStack;
  let key: string;
  let check: ContractChecker;
  const flows = Array.from({ length: 40 }, (_, i) => ({
    src_ip: `10.0.0.${i % 7}`, dst_ip: `172.16.0.${i % 3}`, protocol: ['tcp', 'udp', 'icmp'][i % 3], src_port: 40000 + (i % 2), dst_port: [443, 53][i % 2],
    bytes: 1000 + i * 37, packets: 1 + i, timestamp: from + (i % 15) * minute + 1000, ...(i % 4 ? { exporter: '192.0.2.1' } : {}),
  }));
  const get = (route: string, headers: Record<string, string> = {}) => t.request(`GET`, route, { key, headers });
  const checked = (path: string, res: ApiResponse) => expect(check.problems('GET', path, res)).toEqual([]);

  beforeAll(async () => {
    t = await startTestStack(transport, { WORKER_MAX_WAIT_MS: '20' });
    key = (await t.mintKey({ role: 'operator', orgId: `csv-${transport}` })).key;
    const res = await t.request('POST', '/flow', { key, raw: flows.map((f) => JSON.stringify(f)).join('\n'), contentType: 'application/x-ndjson' });
    expect(res.status).toBe(201);
    await waitForTelemetryDrained(t.stack.nats.jsm, t.stack.config.nats.prefix);
    check = new ContractChecker((await t.request<OpenApiDoc>('GET', '/v1/openapi.json')).body);
  });
  afterAll(async () => {
    await t.stop();
  });

  test('a top-N asked as CSV holds a header row and the very rows of the JSON answer, as a UTF-8 attachment', async () => {
    const query = `/v1/telemetry/flows/top?${span}&by=src_ip,exporter&totals=all&limit=20`;
    const json = (await get(query)).body as FlowTopView;
    const csv = await get(query, csvAccept);
    expect(csv.status).toBe(200);
    expect(csv.headers.get('content-type')).toBe('text/csv; charset=utf-8');
    expect(csv.headers.get('content-disposition')).toBe('attachment; filename="flows-top.csv"');
    expect(csv.headers.get('vary')).toMatch(/Accept/i);
    expect(csv.text.endsWith('\r\n')).toBe(true);
    const [header, ...rows] = parseCsv(csv.text);
    expect(header).toEqual(['src_ip', 'exporter', 'bytes', 'packets', 'flows']);
    expect(json.data.length).toBeGreaterThan(5);
    expect(rows).toEqual(json.data.map((r) => header!.map((c) => cell(r[c]))));
    checked('/v1/telemetry/flows/top', csv);
  });

  test('a split series asked as CSV holds a row per series and step with the JSON numbers', async () => {
    const query = `/v1/telemetry/flows/series?${span}&step=300&split_by=protocol&limit=2`;
    const json = (await get(query)).body as FlowSeriesView;
    const csv = await get(query, csvAccept);
    expect(csv.status).toBe(200);
    expect(csv.headers.get('content-disposition')).toBe('attachment; filename="flows-series.csv"');
    const [header, ...rows] = parseCsv(csv.text);
    expect(header).toEqual(['t', 'protocol', 'other', 'bps', 'pps', 'bytes', 'packets']);
    const expected = json.series.flatMap((s) => s.points.map((p) => header!.map((c) => cell(c in (s.key ?? {}) ? s.key![c] : (p as Record<string, number | string>)[c]))));
    expect(rows).toEqual(expected);
    expect(rows.some((r) => Number(r[5]) > 0)).toBe(true);
    checked('/v1/telemetry/flows/series', csv);
  });

  test('a metric series with no samples answers its header row alone', async () => {
    const csv = await get(`/v1/telemetry/metrics/series?${span}&service=none&metric=latency_ms`, csvAccept);
    expect([csv.status, csv.text, csv.headers.get('content-disposition')]).toEqual([200, 't,avg,samples\r\n', 'attachment; filename="metrics-series.csv"']);
    checked('/v1/telemetry/metrics/series', csv);
  });

  test('an error asked as CSV is still the JSON error shape with its status', async () => {
    const bad = await get(`/v1/telemetry/flows/top?${span}&by=nonsense`, csvAccept);
    expect([bad.status, bad.headers.get('content-type')]).toEqual([400, 'application/json; charset=utf-8']);
    expect((bad.body as ErrorBody).error.code).toBe('VALIDATION_ERROR');
    const anonymous = await t.request('GET', `/v1/telemetry/flows/series?${span}`, { headers: csvAccept });
    expect([anonymous.status, (anonymous.body as ErrorBody).error.code]).toEqual([401, 'UNAUTHORIZED']);
  });

  test('an Accept that names neither CSV nor JSON answers JSON, as before', async () => {
    const res = await get(`/v1/telemetry/flows/top?${span}`, { accept: 'application/xml' });
    expect([res.status, res.headers.get('content-type')]).toEqual([200, 'application/json; charset=utf-8']);
    expect((res.body as FlowTopView).data.length).toBeGreaterThan(0);
  });
});
