import http from 'node:http';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Registry } from 'prom-client';
import { HttpServer } from '../../api/http-server';
import { metricTotal } from '../support/metrics';
import type { ErrorBody, HealthView } from '../support/api-types';
import { rawRequest } from '../support/raw-http';
import { pooled, slowConnection } from '../support/slow-client';
import { startTestStack, type TestStack } from '../support/test-stack';

/**
 * Abuse of the API (OWASP API Top 10): guessing keys, leaking what runs
 * inside, caching of answers, and slow clients. The stack trusts loopback as
 * a reverse proxy, so each test throttles a client address of its own,
 * named in X-Forwarded-For; its HTTP timeouts are short, so slow clients are
 * cut within the test.
 */
const headersTimeoutMs = 3_000;
const requestTimeoutMs = 5_000;
const neverMinted = `ntk_${'0'.repeat(20)}_${'A'.repeat(43)}`;

describe('hardening against abuse', () => {
  let t: TestStack;
  let consoleDir: string;
  let key: string;

  beforeAll(async () => {
    consoleDir = fs.mkdtempSync(path.join(os.tmpdir(), 'nettel-console-'));
    fs.mkdirSync(path.join(consoleDir, 'assets'));
    fs.writeFileSync(path.join(consoleDir, 'index.html'), '<!doctype html><title>nettel</title>');
    fs.writeFileSync(path.join(consoleDir, 'assets', 'main-3f2a1b.js'), 'export {};');
    t = await startTestStack('chdb', {
      ROLES: 'api',
      AUTH_FAILURES_PER_MINUTE: '5',
      TRUSTED_PROXIES: '127.0.0.1',
      HTTP_HEADERS_TIMEOUT_MS: String(headersTimeoutMs),
      HTTP_REQUEST_TIMEOUT_MS: String(requestTimeoutMs),
      CONSOLE_DIR: consoleDir,
    });
    key = (await t.mintKey({ role: 'admin' })).key;
  });
  afterAll(async () => {
    await t?.stop();
    fs.rmSync(consoleDir, { recursive: true, force: true });
  });

  const errorsCounted = async (code: string) =>
    (await t.stack.registry.getSingleMetric('nettel_http_errors_total')!.get()).values.find((v) => v.labels.code === code)?.value ?? 0;

  const from = (address: string, credential?: string) => ({
    headers: { 'x-forwarded-for': address },
    ...(credential ? { key: credential } : {}),
  });

  describe('failed authentication', () => {
    test('a client address that fails too often gets 429 RATE_LIMITED with Retry-After for a bad key', async () => {
      const statuses: number[] = [];
      for (let i = 0; i < 5; i += 1) statuses.push((await t.request('GET', '/v1/whoami', from('198.51.100.1', neverMinted))).status);
      expect(statuses).toEqual([401, 401, 401, 401, 401]);
      const throttled = await t.request<ErrorBody>('GET', '/v1/whoami', from('198.51.100.1', neverMinted));
      expect(throttled.status).toBe(429);
      expect(throttled.body).toEqual({ error: { code: 'RATE_LIMITED', message: expect.stringContaining('failed authentications') as unknown } });
      expect(Number(throttled.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      expect((await t.request('GET', '/v1/whoami', from('198.51.100.1'))).status).toBe(429);
    });

    test('a valid key is served from a throttled address: behind a shared proxy, one failing client locks no one else out', async () => {
      for (let i = 0; i < 6; i += 1) await t.request('GET', '/v1/whoami', from('198.51.100.6', neverMinted));
      expect((await t.request('GET', '/v1/whoami', from('198.51.100.6', neverMinted))).status).toBe(429);
      const served = await t.request<{ org_id: string }>('GET', '/v1/whoami', from('198.51.100.6', key));
      expect(served.status).toBe(200);
      expect((await t.request('GET', '/v1/whoami', from('198.51.100.6', neverMinted))).status).toBe(429);
    });

    test('each throttled request is counted', async () => {
      const before = await metricTotal(t.stack.registry, 'nettel_auth_throttled_requests_total');
      for (let i = 0; i < 7; i += 1) await t.request('GET', '/v1/whoami', from('198.51.100.2', neverMinted));
      expect((await metricTotal(t.stack.registry, 'nettel_auth_throttled_requests_total')) - before).toBe(2);
    });

    test('another client address is not throttled for the failures of one', async () => {
      for (let i = 0; i < 6; i += 1) await t.request('GET', '/v1/whoami', from('198.51.100.3', neverMinted));
      expect((await t.request('GET', '/v1/whoami', from('198.51.100.4', key))).status).toBe(200);
      expect((await t.request('GET', '/v1/whoami', from('198.51.100.4', neverMinted))).status).toBe(401);
    });

    test('successful authentication does not count against the address', async () => {
      for (let i = 0; i < 20; i += 1) expect((await t.request('GET', '/v1/whoami', from('198.51.100.5', key))).status).toBe(200);
      expect((await t.request('GET', '/v1/whoami', from('198.51.100.5', neverMinted))).status).toBe(401);
    });

    test('a repeated unknown key id reaches storage once', async () => {
      const unknown = `ntk_${'1'.repeat(20)}_${'B'.repeat(43)}`;
      const before = await metricTotal(t.stack.registry, 'nettel_key_store_lookups_total');
      for (let i = 0; i < 10; i += 1) {
        expect((await t.request('GET', '/v1/whoami', from(`198.51.101.${i}`, unknown))).status).toBe(401);
      }
      expect((await metricTotal(t.stack.registry, 'nettel_key_store_lookups_total')) - before).toBe(1);
    });
  });

  describe('answers', () => {
    const expectHardened = (headers: Headers | Record<string, string>) => {
      const get = (name: string) => (headers instanceof Headers ? headers.get(name) : headers[name]);
      expect(get('cache-control')).toBe('no-store');
      expect(get('x-content-type-options')).toBe('nosniff');
    };

    test('an API answer is not to be stored by any cache and its content type is not to be sniffed', async () => {
      expectHardened((await t.request('GET', '/v1/whoami', { key })).headers);
    });

    test('error answers carry the same headers, those of the router and of the HTTP parser too', async () => {
      expectHardened((await t.request('GET', '/v1/whoami', from('198.51.100.6'))).headers);
      expectHardened((await t.request('GET', '/v1/nothing-here', { key })).headers);
      expectHardened((await t.request('PUT', '/v1/api-keys', { key })).headers);
      expectHardened((await rawRequest(t.url, 'GET /healthz HTTP/1.1\r\nHost: x\r\nBad\u0001Header: y\r\n\r\n')).headers);
    });

    test("the console's hashed assets keep their year of caching and are not sniffed", async () => {
      const res = await fetch(`${t.url}/assets/main-3f2a1b.js`);
      expect(res.status).toBe(200);
      expect(res.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
      expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    });

    test('healthz without a key names no version, transport or error', async () => {
      const res = await t.request<HealthView>('GET', '/healthz');
      const entries = [...Object.values(res.body.engines), ...Object.values(res.body.loops)];
      expect(entries.map((e) => Object.keys(e))).toEqual(entries.map(() => ['status']));
    });
  });

  describe('slow clients', () => {
    test('1,000 connections trickling their headers or body a byte at a time do not starve other requests, and each is cut by the server', async () => {
      const slow = Array.from({ length: 1_000 }, (_, i) =>
        slowConnection(t.url, {
          head:
            i % 2 === 0
              ? 'GET /v1/whoami HTTP/1.1\r\nHost: x\r\nX-Slow: '
              : `POST /flow HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n[`,
          drip: i % 2 === 0 ? 'a' : ' ',
          everyMs: 200,
          giveUpMs: requestTimeoutMs + 20_000,
        }),
      );
      await Promise.all(slow.map((c) => c.connected));
      // Other clients call, 10 at a time, for as long as slow connections are held, noting how many were held at each answer.
      let open = slow.length;
      slow.forEach((c) => void c.outcome.then(() => (open -= 1)));
      const outcomes = Promise.all(slow.map((c) => c.outcome));
      const normal: Array<{ status: number; slowHeld: number }> = [];
      await pooled(Array.from({ length: 10 }), 10, async () => {
        while (open > 0) normal.push({ status: (await t.request('GET', '/v1/whoami', { key })).status, slowHeld: open });
      });
      const ended = await outcomes;

      expect(normal.filter((n) => n.status !== 200)).toEqual([]);
      expect(normal.filter((n) => n.slowHeld >= 900).length).toBeGreaterThanOrEqual(10);
      // Cut by the server with 408, never left open until this side gave up.
      expect(ended.filter((o) => o.status !== 408)).toEqual([]);
      // Each within its timeout and the server's checking interval (a quarter of the headers timeout here), with slack for a busy machine.
      expect(ended.filter((o, i) => o.closedAfterMs > (i % 2 === 0 ? headersTimeoutMs : requestTimeoutMs) + 5_000)).toEqual([]);
      expect(await errorsCounted('REQUEST_TIMEOUT')).toBe(1_000);
    });

    test('past HTTP_MAX_CONNECTIONS a new connection is closed at once, and those held are still served', async () => {
      const server = new HttpServer(
        { host: '127.0.0.1', port: 0, headersTimeoutMs: 60_000, requestTimeoutMs: 60_000, keepAliveTimeoutMs: 60_000, shutdownGraceMs: 1_000, maxConnections: 3 },
        (_req, res) => res.end('ok'),
        new Registry(),
      );
      await server.start();
      const held = await Promise.all([1, 2, 3].map(() => openSocket(server.boundPort)));
      try {
        const extra = await openSocket(server.boundPort);
        const closedUnanswered = await new Promise<boolean>((resolve) => {
          let answered = false;
          extra.on('data', () => (answered = true)).on('close', () => resolve(!answered));
          extra.write('GET / HTTP/1.1\r\nHost: x\r\n\r\n');
        });
        expect(closedUnanswered).toBe(true);
        const answer = await new Promise<string>((resolve) => {
          held[0]!.once('data', (chunk) => resolve(chunk.toString('latin1')));
          held[0]!.write('GET / HTTP/1.1\r\nHost: x\r\n\r\n');
        });
        expect(answer).toMatch(/^HTTP\/1\.1 200/);
      } finally {
        held.forEach((socket) => socket.destroy());
        await server.stop();
      }
    });

    /** A server whose clients have ten minutes for their headers: only its shutdown grace can end a stop early. */
    async function patientServer(handler: http.RequestListener): Promise<HttpServer> {
      const server = new HttpServer(
        { host: '127.0.0.1', port: 0, headersTimeoutMs: 600_000, requestTimeoutMs: 600_000, keepAliveTimeoutMs: 600_000, shutdownGraceMs: 500, maxConnections: 10 },
        handler,
        new Registry(),
      );
      await server.start();
      return server;
    }
    const closed = (socket: net.Socket) => new Promise<void>((resolve) => socket.once('close', () => resolve()));

    test('a stop closes the connection of a client that never finishes its request once the shutdown grace has passed', async () => {
      // As the API does, the request is answered once its body has arrived: this one's never does.
      const server = await patientServer((req, res) => req.resume().on('end', () => res.end('ok')));
      const trickling = await openSocket(server.boundPort);
      trickling.write('POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\nabc');
      const cut = closed(trickling);
      await server.stop();
      await cut;
      expect(trickling.destroyed).toBe(true);
    });

    test('a request in progress when the stop begins is answered within the shutdown grace', async () => {
      const server = await patientServer((_req, res) => setTimeout(() => res.end('late but whole'), 200));
      const client = await openSocket(server.boundPort);
      const answer = new Promise<string>((resolve) => client.once('data', (chunk) => resolve(chunk.toString('latin1'))));
      client.write('GET / HTTP/1.1\r\nHost: x\r\n\r\n');
      await new Promise((resolve) => setTimeout(resolve, 50));
      await server.stop();
      expect(await answer).toMatch(/^HTTP\/1\.1 200[\s\S]*late but whole$/);
      client.destroy();
    });
  });
});

function openSocket(port: number): Promise<net.Socket> {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host: '127.0.0.1', port });
    socket.once('connect', () => resolve(socket)).once('error', reject);
  });
}
