import { isErrorBody } from '../support/api-types';
import { startTestOidcProvider, type TestOidcProvider } from '../support/oidc-provider';
import { startTestStack, type TestStack } from '../support/test-stack';
import { malformedRequests, type MalformedRequest } from '../support/malformed';
import { rawRequest } from '../support/raw-http';
import { pooled } from '../support/slow-client';

interface Outcome {
  status: number;
  body: string;
}

async function send(url: string, req: MalformedRequest): Promise<Outcome> {
  if (req.raw) {
    const res = await rawRequest(url, req.raw);
    return { status: res.status, body: res.body };
  }
  const res = await fetch(`${url}${req.path}`, { method: req.method, headers: req.headers, body: req.body });
  return { status: res.status, body: await res.text() };
}

function problem(req: MalformedRequest, out: Outcome): string | undefined {
  const where = `${req.label}: ${req.method} ${req.path.slice(0, 80)}`;
  if (out.status < 400 || out.status >= 500) return `${where} answered ${out.status}`;
  try {
    const body: unknown = JSON.parse(out.body);
    if (!isErrorBody(body)) return `${where}: body lacks error`;
  } catch {
    return `${where}: body is not JSON (${out.body.slice(0, 60)})`;
  }
  return undefined;
}

describe('malformed input', () => {
  let t: TestStack;
  let provider: TestOidcProvider;
  beforeAll(async () => {
    // Single sign-on on: a bearer that reads as a JWT goes to the OpenID provider's keys, a door of its own.
    provider = await startTestOidcProvider({ users: [] });
    t = await startTestStack('chdb', { OIDC_ISSUER_URL: provider.issuer, OIDC_CLIENT_ID: provider.clientId, OIDC_AUDIENCE: provider.audience });
  });
  afterAll(async () => {
    await t?.stop();
    await provider?.stop();
  });

  test('10,000 generated malformed requests across every endpoint all get a 4xx with the error body', async () => {
    const { key } = await t.mintKey({ role: 'admin' });
    const requests = malformedRequests(t.stack.routes!, {
      key,
      count: 10_000,
      seed: 20261121,
      acceptsNdjson: (path) => ['/flow', '/ingest', '/v1/ingest/events'].includes(path),
    });
    const endpoints = new Set(requests.map((r) => r.path.split('?')[0]));
    expect(endpoints.size).toBeGreaterThanOrEqual(t.stack.routes!.length - 2);
    // 16 at a time over kept-alive connections (fetch's default): a storm, not a queue of 10,000 sockets.
    const outcomes = await pooled(requests, 16, (r) => send(t.url, r));
    const problems = requests.map((r, i) => problem(r, outcomes[i]!)).filter((p) => p !== undefined);
    expect(problems).toEqual([]);
    // The storm reached validation, not only the key check.
    expect([...new Set(outcomes.map((o) => o.status))]).toEqual(expect.arrayContaining([400, 401, 404, 405, 415]));
  });

  test('the service still answers normally after the malformed storm', async () => {
    const res = await t.request('GET', '/healthz');
    expect(res.status).toBe(200);
  });
});
