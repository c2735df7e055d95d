import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Registry } from 'prom-client';
import { createApp } from '../../api/app';
import { SessionService } from '../../application/identity/session-service';
import { freePort } from '../../engines/local-process';
import { createLogger } from '../../observability/logger';
import { sessionBucketOf, sessionLimitsOf } from '../../service/console-sessions';
import { apiRole } from '../../service/roles/api';
import type { ConsoleSessionView, ErrorBody } from '../support/api-types';
import { sessionCookieName, setCookies, signInThroughConsole } from '../support/console-sign-in';
import { startTestOidcProvider, type TestOidcProvider } from '../support/oidc-provider';
import { startTestStack, type TestStack } from '../support/test-stack';
import { waitFor } from '../support/wait';

/**
 * The console's sessions on a whole stack (the sessions in the stack's
 * JetStream bucket) and a real OpenID provider on loopback: sign-in through
 * the provider, key sessions, cookie flags, CSRF refusals, logout, and the
 * time-outs (on a second API process whose sessions read a clock the test
 * moves).
 */
const users = [
  { subject: 'u-nogroup', name: 'Nora Nogroup', email: 'nora@example.org', groups: ['contractors'] },
  { subject: 'u-alice', name: 'Alice Martin', email: 'alice@example.org', groups: ['noc'] },
  { subject: 'u-dave', name: 'Dave Two-Hats', email: 'dave@example.org', groups: ['noc', 'edge-analysts'] },
];

/** Jest's asymmetric matchers, typed as what they are to the compiler: values to compare with. */
const anyString = (): unknown => expect.any(String);
const matching = (pattern: RegExp): unknown => expect.stringMatching(pattern);
const containing = (text: string): unknown => expect.stringContaining(text);
const including = (items: string[]): unknown => expect.arrayContaining(items);

let provider: TestOidcProvider;
let t: TestStack;
let origin: string;

beforeAll(async () => {
  const port = await freePort();
  origin = `http://127.0.0.1:${port}`;
  provider = await startTestOidcProvider({ users, redirectUris: [`${origin}/auth/callback`], postLogoutRedirectUris: [`${origin}/`] });
  t = await startTestStack('chdb', {
    PORT: String(port),
    OIDC_ISSUER_URL: provider.issuer,
    OIDC_CLIENT_ID: provider.clientId,
    OIDC_CLIENT_SECRET: provider.clientSecret,
    OIDC_REDIRECT_BASE_URL: origin,
    OIDC_AUDIENCE: provider.audience,
  });
}, 120_000);

afterAll(async () => {
  await t?.stop();
  await provider?.stop();
});

/** A request made as the console makes it: the session cookie, the CSRF token and the console's Origin when given. */
async function asConsole<T = unknown>(method: string, route: string, opts: { session?: string; csrf?: string; origin?: string | null; body?: unknown } = {}) {
  const headers: Record<string, string> = {};
  if (opts.session) headers.cookie = `${sessionCookieName}=${opts.session}`;
  if (opts.csrf) headers['x-csrf-token'] = opts.csrf;
  if (opts.origin !== null) headers.origin = opts.origin ?? origin;
  if (opts.body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(`${t.url}${route}`, { method, headers, body: opts.body === undefined ? undefined : JSON.stringify(opts.body) });
  const text = await res.text();
  return { status: res.status, headers: res.headers, res, body: (text ? JSON.parse(text) : undefined) as T };
}

/** A key session opened with `key`: its cookie's value and the session as GET /auth/session reads it. */
async function keySession(key: string) {
  const opened = await asConsole<ConsoleSessionView>('POST', '/auth/key-session', { body: { key } });
  expect(opened.status).toBe(201);
  return { session: setCookies(opened.res).get(sessionCookieName)!.value, view: opened.body };
}

describe('key sessions', () => {
  test('an API key given once opens a session whose cookie is HttpOnly, Secure, SameSite=Strict and host-only at path /', async () => {
    const operator = await t.mintKey({ role: 'operator' });
    const opened = await asConsole<ConsoleSessionView>('POST', '/auth/key-session', { body: { key: operator.key } });
    const cookie = setCookies(opened.res).get(sessionCookieName)!;
    expect(cookie.value).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(cookie.attributes).toEqual(expect.arrayContaining(['path=/', 'secure', 'httponly', 'samesite=strict']));
    expect(cookie.attributes.some((a) => a.startsWith('domain='))).toBe(false);
    expect(opened.body).toMatchObject({ kind: 'key', person: null, key_id: operator.key_id, workspace: operator.org_id, roles: ['operator'] });
    expect(JSON.stringify(opened.body)).not.toContain(operator.key);
  });

  test('the session stands in for the key on the API: GET /auth/session and /v1/whoami answer with the cookie alone', async () => {
    const analyst = await t.mintKey({ role: 'analyst' });
    const { session, view } = await keySession(analyst.key);
    const read = await asConsole<ConsoleSessionView>('GET', '/auth/session', { session, origin: null });
    expect(read.body).toEqual(view);
    const me = await asConsole<{ key_id: string; org_id: string }>('GET', '/v1/whoami', { session, origin: null });
    expect([me.status, me.body.key_id, me.body.org_id]).toEqual([200, analyst.key_id, analyst.org_id]);
  });

  test('a key session is opened from the console’s own origin only (no login CSRF from another site)', async () => {
    const { key } = await t.mintKey({ role: 'analyst' });
    const foreign = await asConsole<ErrorBody>('POST', '/auth/key-session', { body: { key }, origin: 'https://evil.example' });
    const none = await asConsole<ErrorBody>('POST', '/auth/key-session', { body: { key }, origin: null });
    expect([foreign.status, foreign.body.error.code, none.status]).toEqual([403, 'FORBIDDEN', 403]);
    expect(setCookies(foreign.res).has(sessionCookieName)).toBe(false);
  });

  test('a wrong key opens no session: 401 and no cookie', async () => {
    const refused = await asConsole<ErrorBody>('POST', '/auth/key-session', { body: { key: 'ntk_00000000000000000000_' + 'x'.repeat(43) } });
    expect([refused.status, refused.body.error.code, setCookies(refused.res).has(sessionCookieName)]).toEqual([401, 'UNAUTHORIZED', false]);
  });

  test('a revoked key ends its sessions', async () => {
    const analyst = await t.mintKey({ role: 'analyst' });
    const { session } = await keySession(analyst.key);
    expect((await t.request('DELETE', `/v1/api-keys/${analyst.key_id}`, { key: t.adminKey })).status).toBe(200);
    expect((await asConsole('GET', '/v1/whoami', { session, origin: null })).status).toBe(401);
  });
});

describe('CSRF', () => {
  const policy = { name: 'csrf check', requires_approval: true };

  test('a change made with the session cookie and its CSRF token from the console’s origin is accepted', async () => {
    const { key } = await t.mintKey({ role: 'operator' });
    const { session, view } = await keySession(key);
    expect((await asConsole('POST', '/v1/policies', { session, csrf: view.csrf_token, body: policy })).status).toBe(201);
  });

  test('a change made with the session cookie without the CSRF token is refused 403', async () => {
    const { key } = await t.mintKey({ role: 'operator' });
    const { session } = await keySession(key);
    const refused = await asConsole<ErrorBody>('POST', '/v1/policies', { session, body: policy });
    expect([refused.status, refused.body.error.code]).toEqual([403, 'FORBIDDEN']);
    expect(refused.body.error.message).toContain('X-CSRF-Token');
  });

  test('a change made with the session cookie and a wrong CSRF token is refused 403', async () => {
    const { key } = await t.mintKey({ role: 'operator' });
    const { session, view } = await keySession(key);
    const wrong = view.csrf_token.slice(0, -1) + (view.csrf_token.endsWith('A') ? 'B' : 'A');
    expect((await asConsole('POST', '/v1/policies', { session, csrf: wrong, body: policy })).status).toBe(403);
  });

  test('a change made with the session cookie and its token from another origin, or with none, is refused 403', async () => {
    const { key } = await t.mintKey({ role: 'operator' });
    const { session, view } = await keySession(key);
    const foreign = await asConsole<ErrorBody>('POST', '/v1/policies', { session, csrf: view.csrf_token, origin: 'http://127.0.0.2:9', body: policy });
    const none = await asConsole('POST', '/v1/policies', { session, csrf: view.csrf_token, origin: null, body: policy });
    expect([foreign.status, foreign.body.error.message, none.status]).toEqual([403, containing('origin'), 403]);
  });

  test('an API key needs no CSRF token: it is no cookie a browser sends by itself', async () => {
    const { key } = await t.mintKey({ role: 'operator' });
    expect((await t.request('POST', '/v1/policies', { key, body: policy })).status).toBe(201);
  });

  test('reads made with the session cookie need no CSRF token', async () => {
    const { key } = await t.mintKey({ role: 'analyst' });
    const { session } = await keySession(key);
    expect((await asConsole('GET', '/v1/policies', { session, origin: null })).status).toBe(200);
  });
});

describe('logout', () => {
  test('a logout ends the session: the cookie is cleared and the old cookie no longer signs in', async () => {
    const { key } = await t.mintKey({ role: 'analyst' });
    const { session, view } = await keySession(key);
    const out = await asConsole<{ logout_url: string | null }>('POST', '/auth/logout', { session, csrf: view.csrf_token });
    expect([out.status, out.body.logout_url]).toEqual([200, null]);
    expect(setCookies(out.res).get(sessionCookieName)).toMatchObject({ value: '', attributes: including(['max-age=0']) });
    const after = await asConsole<ErrorBody>('GET', '/auth/session', { session, origin: null });
    expect([after.status, after.body.error.code]).toEqual([401, 'UNAUTHORIZED']);
  });

  test('a logout without the CSRF token is refused and the session stays', async () => {
    const { key } = await t.mintKey({ role: 'analyst' });
    const { session } = await keySession(key);
    expect((await asConsole('POST', '/auth/logout', { session })).status).toBe(403);
    expect((await asConsole('GET', '/auth/session', { session, origin: null })).status).toBe(200);
  });
});

/** A second API process on the stack's engines whose sessions read `clock.now`, so time-outs pass without waiting. */
async function apiWithSessionClock(clock: { now: number }) {
  const { config } = t.stack;
  const registry = new Registry();
  const { deps } = apiRole(config, { ...t.stack.adapters, registry, log: createLogger('silent') }, []);
  const bucket = sessionBucketOf(config, t.stack.nats);
  await bucket.start();
  const sessions = new SessionService({ store: bucket, limits: sessionLimitsOf(config), registry, now: () => clock.now });
  const server = http.createServer(createApp({ ...deps, consoleAuth: { ...deps.consoleAuth, sessions } }).app.callback());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const read = async (session: string) => (await fetch(`${url}/auth/session`, { headers: { cookie: `${sessionCookieName}=${session}` } })).status;
  const open = async (key: string) => {
    const res = await fetch(`${url}/auth/key-session`, { method: 'POST', headers: { 'content-type': 'application/json', origin: url }, body: JSON.stringify({ key }) });
    return setCookies(res).get(sessionCookieName)!.value;
  };
  const stop = () => {
    server.closeAllConnections();
    return new Promise<void>((resolve) => server.close(() => resolve()));
  };
  return { open, read, stop };
}

describe('time-outs', () => {
  const minute = 60_000;

  test('a session unused for SESSION_IDLE_MINUTES ends', async () => {
    const clock = { now: Date.now() };
    const api = await apiWithSessionClock(clock);
    try {
      const session = await api.open((await t.mintKey({ role: 'analyst' })).key);
      clock.now += 29 * minute;
      expect(await api.read(session)).toBe(200);
      clock.now += 30 * minute;
      expect(await api.read(session)).toBe(401);
    } finally {
      await api.stop();
    }
  });

  test('a session in use ends SESSION_MAX_HOURS after sign-in all the same', async () => {
    const clock = { now: Date.now() };
    const api = await apiWithSessionClock(clock);
    try {
      const session = await api.open((await t.mintKey({ role: 'analyst' })).key);
      for (let hour = 1; hour < 12; hour += 1) {
        clock.now += 20 * minute;
        expect(await api.read(session)).toBe(200);
        clock.now += 20 * minute;
        expect(await api.read(session)).toBe(200);
        clock.now += 20 * minute;
        expect(await api.read(session)).toBe(200);
      }
      clock.now += 60 * minute;
      expect(await api.read(session)).toBe(401);
    } finally {
      await api.stop();
    }
  });
});

describe('single sign-on', () => {
  test('GET /auth/config tells the console single sign-on is configured', async () => {
    expect((await t.request('GET', '/auth/config')).body).toEqual({ single_sign_on: true });
  });

  test('GET /auth/login sends the browser to the provider with PKCE (S256), state and nonce, and keeps the sign-in in a Lax HttpOnly cookie', async () => {
    const res = await fetch(`${t.url}/auth/login`, { redirect: 'manual' });
    const location = new URL(res.headers.get('location')!);
    expect(res.status).toBe(302);
    expect(location.origin).toBe(provider.issuer);
    expect(Object.fromEntries(location.searchParams)).toMatchObject({
      client_id: provider.clientId,
      redirect_uri: `${origin}/auth/callback`,
      response_type: 'code',
      code_challenge_method: 'S256',
      code_challenge: matching(/^[A-Za-z0-9_-]{43}$/),
      state: anyString(),
      nonce: anyString(),
    });
    expect(setCookies(res).get('__Host-nettel_login')?.attributes).toEqual(expect.arrayContaining(['path=/', 'secure', 'httponly', 'samesite=lax', 'max-age=600']));
  });

  test('a person in no mapped group gets a clear 403 and no session', async () => {
    const { callback, session } = await signInThroughConsole(t.url, provider.issuer, 'u-nogroup');
    const body = (await callback.json()) as ErrorBody;
    expect([callback.status, body.error.code, session]).toEqual([403, 'FORBIDDEN', undefined]);
    expect(body.error.message).toContain('Nora Nogroup');
    expect(body.error.message).toContain('none of their groups is mapped to a workspace');
  });

  test('a browser coming back from the provider with no mapped group is shown the sign-in page with the reason', async () => {
    const { callback, session } = await signInThroughConsole(t.url, provider.issuer, 'u-nogroup', 'text/html');
    expect([callback.status, session]).toEqual([303, undefined]);
    expect(callback.headers.get('location')).toMatch(/^\/#\/sign-in-failed\?reason=.*none%20of%20their%20groups/);
  });

  test('a callback this browser did not begin is refused', async () => {
    const res = await fetch(`${t.url}/auth/callback?code=abc&state=def`);
    expect([res.status, ((await res.json()) as ErrorBody).error.code]).toEqual([400, 'VALIDATION_ERROR']);
  });
});

describe('a person signed in through the provider', () => {
  /** Two workspaces: `noc` operates the first, `edge-analysts` reads the second. */
  let first: { key: string; org_id: string };
  let second: { key: string; org_id: string };

  beforeAll(async () => {
    first = await t.mintKey({ role: 'admin' });
    second = await t.mintKey({ role: 'admin' });
    expect((await t.request('PUT', '/v1/sso/group-mappings', { key: first.key, body: { version: 0, mappings: [{ group: 'noc', roles: ['operator'] }] } })).status).toBe(200);
    expect((await t.request('PUT', '/v1/sso/group-mappings', { key: second.key, body: { version: 0, mappings: [{ group: 'edge-analysts', roles: ['analyst'] }] } })).status).toBe(200);
  });

  /** Signs `subject` in and reads the session: its cookie's value and view. */
  async function personSession(subject: string) {
    const { callback, session } = await waitFor(async () => {
      const signedIn = await signInThroughConsole(t.url, provider.issuer, subject);
      return signedIn.callback.status === 303 ? signedIn : undefined;
    }, 10_000, `${subject}'s session`);
    expect(callback.headers.get('location')).toBe('/');
    const read = await asConsole<ConsoleSessionView>('GET', '/auth/session', { session, origin: null });
    return { session: session!, view: read.body };
  }

  test('the callback opens a session naming the person, the workspace their one group maps to, and its roles', async () => {
    const { session, view } = await personSession('u-alice');
    expect(view).toMatchObject({
      kind: 'person',
      person: { subject: 'u-alice', name: 'Alice Martin', email: 'alice@example.org' },
      key_id: null,
      workspaces: [{ org_id: first.org_id, roles: ['operator'] }],
      workspace: first.org_id,
      roles: ['operator'],
    });
    const me = await asConsole<{ via: string; person: { name: string }; roles: string[] }>('GET', '/v1/whoami', { session, origin: null });
    expect([me.status, me.body.via, me.body.person.name, me.body.roles]).toEqual([200, 'session', 'Alice Martin', ['operator']]);
  });

  test('the session keeps neither the provider’s tokens nor the id in what the console reads', async () => {
    const { session, view } = await personSession('u-alice');
    const text = JSON.stringify(view);
    expect(text).not.toContain(session);
    expect(text).not.toMatch(/eyJ[A-Za-z0-9_-]+\./);
  });

  test('a person in groups of two workspaces picks one: none is chosen at first, and the API asks for the choice', async () => {
    const { session, view } = await personSession('u-dave');
    expect([view.workspace, view.workspaces.map((w) => w.org_id).sort()]).toEqual([null, [first.org_id, second.org_id].sort()]);
    const before = await asConsole<ErrorBody>('GET', '/v1/incidents', { session, origin: null });
    expect([before.status, before.body.error.message]).toEqual([403, containing('POST /auth/workspace')]);
    const chosen = await asConsole<ConsoleSessionView>('POST', '/auth/workspace', { session, csrf: view.csrf_token, body: { org_id: second.org_id } });
    expect([chosen.status, chosen.body.workspace, chosen.body.roles]).toEqual([200, second.org_id, ['analyst']]);
    expect((await asConsole('GET', '/v1/incidents', { session, origin: null })).status).toBe(200);
  });

  test('choosing a workspace the person holds no role in is refused 403', async () => {
    const { session, view } = await personSession('u-alice');
    const refused = await asConsole<ErrorBody>('POST', '/auth/workspace', { session, csrf: view.csrf_token, body: { org_id: second.org_id } });
    expect([refused.status, refused.body.error.code]).toEqual([403, 'FORBIDDEN']);
  });

  test('a group removed from the mappings takes effect on the open session', async () => {
    const third = await t.mintKey({ role: 'admin' });
    const mapped = await t.request<{ version: number }>('PUT', '/v1/sso/group-mappings', { key: third.key, body: { version: 0, mappings: [{ group: 'edge-analysts', roles: ['analyst'] }] } });
    const { session, view } = await personSession('u-dave');
    await asConsole('POST', '/auth/workspace', { session, csrf: view.csrf_token, body: { org_id: third.org_id } });
    expect((await asConsole('GET', '/v1/incidents', { session, origin: null })).status).toBe(200);
    await t.request('PUT', '/v1/sso/group-mappings', { key: third.key, body: { version: mapped.body.version, mappings: [] } });
    const refused = await waitFor(async () => {
      const res = await asConsole<ErrorBody>('GET', '/v1/incidents', { session, origin: null });
      return res.status === 403 ? res : undefined;
    }, 10_000, 'the removed mapping to apply');
    expect(refused.body.error.message).toContain(third.org_id);
  });

  test('a person’s logout answers the provider’s RP-initiated logout with the ID token hint and the console as the way back', async () => {
    const { session, view } = await personSession('u-alice');
    const out = await asConsole<{ logout_url: string }>('POST', '/auth/logout', { session, csrf: view.csrf_token });
    const url = new URL(out.body.logout_url);
    expect([out.status, url.origin]).toEqual([200, provider.issuer]);
    expect(url.searchParams.get('id_token_hint')).toMatch(/^eyJ/);
    expect(url.searchParams.get('post_logout_redirect_uri')).toBe(`${origin}/`);
    expect((await asConsole('GET', '/auth/session', { session, origin: null })).status).toBe(401);
  });

  test('a callback replayed with the same code and sign-in cookie is refused', async () => {
    const first = await fetch(`${t.url}/auth/login`, { redirect: 'manual' });
    const login = setCookies(first).get('__Host-nettel_login')!.value;
    const replay = await fetch(`${t.url}/auth/callback?code=x&state=y`, { headers: { cookie: `__Host-nettel_login=${login}` } });
    const again = await fetch(`${t.url}/auth/callback?code=x&state=y`, { headers: { cookie: `__Host-nettel_login=${login}` } });
    expect([replay.status, again.status]).toEqual([401, 400]);
  });
});
