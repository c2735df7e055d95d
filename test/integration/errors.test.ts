import type { ErrorBody, HealthView } from '../support/api-types';
import { startTestStack, type TestStack } from '../support/test-stack';
import { rawRequest } from '../support/raw-http';

/** `expect.any(String)`, typed as what it is to the compiler: a value to compare with. */
const anyString = (): unknown => expect.any(String);

const errorBody = (code: string) => ({ error: { code, message: anyString() } });

describe('error answers', () => {
  let t: TestStack;
  let key: string;
  beforeAll(async () => {
    t = await startTestStack('chdb', { BODY_LIMIT_BYTES: String(64 * 1024) });
    key = (await t.mintKey({ role: 'admin' })).key;
  });
  afterAll(async () => {
    await t.stop();
  });

  test('healthz answers without a key and says only up or down for each engine and loop', async () => {
    const res = await t.request<HealthView>('GET', '/healthz');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      status: 'ok',
      engines: { nats: { status: 'up' }, clickhouse: { status: 'up' }, temporal: { status: 'up' } },
      loops: { 'stream-workers': { status: 'up' }, 'webhook-fanout': { status: 'up' }, 'webhook-delivery': { status: 'up' } },
    });
  });

  test('healthz with the platform admin key reports each engine with its version', async () => {
    const res = await t.request<HealthView>('GET', '/healthz', { key: t.adminKey });
    expect(res.status).toBe(200);
    for (const engine of ['nats', 'clickhouse', 'temporal'] as const) {
      expect(res.body.engines[engine]).toMatchObject({ status: 'up', version: anyString() });
    }
  });

  test('healthz with an invalid key is 401 UNAUTHORIZED', async () => {
    const res = await t.request('GET', '/healthz', { key: 'nta_not_the_admin_key' });
    expect(res.status).toBe(401);
    expect(res.body).toEqual(errorBody('UNAUTHORIZED'));
  });

  test('an unknown route is 404 NOT_FOUND with the error body', async () => {
    const res = await t.request('GET', '/v1/nothing-here', { key });
    expect(res.status).toBe(404);
    expect(res.body).toEqual(errorBody('NOT_FOUND'));
  });

  test('a method a route does not take is 405 with the error body and an Allow header', async () => {
    const res = await t.request('PUT', '/v1/api-keys', { key });
    expect(res.status).toBe(405);
    expect(res.body).toEqual(errorBody('METHOD_NOT_ALLOWED'));
    expect(res.headers.get('allow')).toContain('POST');
  });

  test('a body over the limit is 413 PAYLOAD_TOO_LARGE', async () => {
    const res = await t.request('POST', '/v1/api-keys', { key, raw: JSON.stringify({ name: 'x'.repeat(70 * 1024) }) });
    expect(res.status).toBe(413);
    expect(res.body).toEqual(errorBody('PAYLOAD_TOO_LARGE'));
  });

  test('a gzip body that inflates past the limit is 413', async () => {
    const { gzipSync } = await import('node:zlib');
    const bomb = gzipSync(Buffer.from(JSON.stringify({ name: 'a'.repeat(1024 * 1024) })));
    const res = await t.request('POST', '/v1/api-keys', { key, raw: bomb, headers: { 'content-encoding': 'gzip' } });
    expect(res.status).toBe(413);
    expect(res.body).toEqual(errorBody('PAYLOAD_TOO_LARGE'));
  });

  test('a gzip body of endless empty deflate blocks is 413 once its compressed bytes pass the limit, without waiting for the time-out', async () => {
    // A gzip header, then stored blocks of no bytes (BFINAL 0, LEN 0, NLEN 0xffff): they inflate to nothing, forever.
    const header = Buffer.from([0x1f, 0x8b, 0x08, 0, 0, 0, 0, 0, 0, 0xff]);
    const emptyBlocks = Buffer.concat(Array.from({ length: 16 * 1024 }, () => Buffer.from([0x00, 0x00, 0x00, 0xff, 0xff])));
    const { request } = await import('node:http');
    const url = new URL('/v1/api-keys', t.url);
    const started = Date.now();
    const status = await new Promise<number>((resolve, reject) => {
      let answered = false;
      const req = request(url, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'content-encoding': 'gzip' } }, (res) => {
        answered = true;
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.on('error', (err) => (answered ? undefined : reject(err)));
      req.write(header);
      const more = () => {
        if (answered || req.destroyed) return;
        req.write(emptyBlocks, () => setImmediate(more));
      };
      more();
    });
    expect(status).toBe(413);
    expect(Date.now() - started).toBeLessThan(10_000);
  });

  test('a content type the endpoint does not take is 415 UNSUPPORTED_MEDIA_TYPE', async () => {
    const res = await t.request('POST', '/v1/api-keys', { key, raw: 'name=x', contentType: 'application/x-www-form-urlencoded' });
    expect(res.status).toBe(415);
    expect(res.body).toEqual(errorBody('UNSUPPORTED_MEDIA_TYPE'));
  });

  test('malformed JSON is 400 VALIDATION_ERROR', async () => {
    const res = await t.request('POST', '/v1/api-keys', { key, raw: '{"role":' });
    expect(res.status).toBe(400);
    expect(res.body).toEqual(errorBody('VALIDATION_ERROR'));
  });

  test('a field of the wrong type is 400 naming the field', async () => {
    const res = await t.request<ErrorBody>('POST', '/v1/api-keys', { key, body: { expires_in_seconds: 'soon' } });
    expect(res.status).toBe(400);
    expect(res.body.error.details).toEqual([expect.objectContaining({ path: 'expires_in_seconds' })]);
  });

  test('invalid UTF-8 is 400 VALIDATION_ERROR', async () => {
    const res = await t.request('POST', '/v1/api-keys', { key, raw: Buffer.from([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x7d]) });
    expect(res.status).toBe(400);
    expect(res.body).toEqual(errorBody('VALIDATION_ERROR'));
  });

  test('an unpaired surrogate escape in a string is 400, on key names and telemetry alike', async () => {
    const named = await t.request('POST', '/v1/api-keys', { key, raw: '{"name":"edge\\ud800"}' });
    expect(named.status).toBe(400);
    const signal = await t.request<ErrorBody>('POST', '/ingest', {
      key,
      raw: '{"telemetry":"dns","service":"a\\udc00b","environment":"prod","region":"eu"}',
    });
    expect(signal.status).toBe(400);
    expect(signal.body.error.code).toBe('VALIDATION_ERROR');
    const paired = await t.request('POST', '/ingest', {
      key,
      raw: '{"telemetry":"dns","service":"smile \\ud83d\\ude00","environment":"prod","region":"eu"}',
    });
    expect(paired.status).toBe(202);
  });

  test('a header block the HTTP parser rejects still gets the error body', async () => {
    const res = await rawRequest(t.url, 'GET /healthz HTTP/1.1\r\nHost: x\r\nBad\u0001Header: y\r\n\r\n');
    expect(res.status).toBe(400);
    expect(JSON.parse(res.body)).toEqual(errorBody('VALIDATION_ERROR'));
  });

  test('a header block over the size limit is 431 with the error body', async () => {
    const res = await rawRequest(t.url, `GET /healthz HTTP/1.1\r\nHost: x\r\nX-Junk: ${'a'.repeat(20_000)}\r\n\r\n`);
    expect(res.status).toBe(431);
    expect(JSON.parse(res.body)).toEqual(errorBody('HEADERS_TOO_LARGE'));
  });

  test('a bad percent-encoding in a path is a 4xx, not a 500', async () => {
    const res = await t.request<ErrorBody>('DELETE', '/v1/api-keys/%E0%A4%A', { key });
    expect(res.status).toBeGreaterThanOrEqual(400);
    expect(res.status).toBeLessThan(500);
    expect(res.body.error.code).toEqual(expect.any(String));
  });

  test('metrics count error answers by code', async () => {
    const res = await fetch(`${t.url}/metrics`, { headers: { authorization: `Bearer ${t.adminKey}` } });
    const text = await res.text();
    expect(text).toMatch(/nettel_http_errors_total\{code="NOT_FOUND"\} \d+/);
  });
});
