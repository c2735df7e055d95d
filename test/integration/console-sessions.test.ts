import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Registry } from 'prom-client';
import { createApp } from '../../api/app';
import { SessionService } from '../../application/identity/session-service';
import { createLogger } from '../../observability/logger';
import { sessionBucketOf, sessionLimitsOf, signInBucketOf } from '../../service/console-sessions';
import { apiRole } from '../../service/roles/api';
import type { ConsoleSessionView, ErrorBody } from '../support/api-types';
import { sessionCookieName, setCookies } from '../support/console-sign-in';
import { startConsoleStack, type ConsoleStack } from '../support/console-stack';
import type { TestStack } from '../support/test-stack';

/**
 * The console's sessions on a whole stack (the sessions in the stack's
 * JetStream bucket): key sessions and their cookie, CSRF refusals, logout,
 * and the time-outs (on a second API process whose sessions read a clock the
 * test moves). console-sign-in.test.ts signs people in through the provider.
 */
const users = [{ subject: 'u-alice', name: 'Alice Martin', email: 'alice@example.org', groups: ['noc'] }];

const containing = (text: string): unknown => expect.stringContaining(text);
const matching = (pattern: RegExp): unknown => expect.stringMatching(pattern);
const including = (items: string[]): unknown => expect.arrayContaining(items);

let c: ConsoleStack;
let t: TestStack;
let asConsole: ConsoleStack['asConsole'];
let keySession: ConsoleStack['keySession'];

beforeAll(async () => {
  c = await startConsoleStack(users);
  ({ t, asConsole, keySession } = c);
}, 120_000);

afterAll(async () => {
  await c?.stop();
});

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

  test('GET /auth/config tells a browser with a live session that it is signed in, and one with an ended session that it is not', async () => {
    const { key } = await t.mintKey({ role: 'analyst' });
    const { session, view } = await keySession(key);
    expect((await asConsole('GET', '/auth/config', { session, origin: null })).body).toEqual({ single_sign_on: true, signed_in: true });
    await asConsole('POST', '/auth/logout', { session, csrf: view.csrf_token });
    const after = await asConsole('GET', '/auth/config', { session, origin: null });
    expect([after.body, setCookies(after.res).get(sessionCookieName)?.value]).toEqual([{ single_sign_on: true, signed_in: false }, '']);
  });

  test('a key session is opened from the console’s own origin only (no login CSRF from another site)', async () => {
    const { key } = await t.mintKey({ role: 'analyst' });
    const foreign = await asConsole<ErrorBody>('POST', '/auth/key-session', { body: { key }, origin: 'https://evil.example' });
    const none = await asConsole<ErrorBody>('POST', '/auth/key-session', { body: { key }, origin: null });
    expect([foreign.status, foreign.body.error.code, none.status]).toEqual([403, 'FORBIDDEN', 403]);
    expect(setCookies(foreign.res).has(sessionCookieName)).toBe(false);
  });

  test('a new sign-in in the same browser ends the session it held before', async () => {
    const { key } = await t.mintKey({ role: 'analyst' });
    const { session: before } = await keySession(key);
    const again = await asConsole('POST', '/auth/key-session', { session: before, body: { key } });
    expect([again.status, setCookies(again.res).get(sessionCookieName)?.value]).toEqual([201, matching(/^[A-Za-z0-9_-]{43}$/)]);
    expect((await asConsole('GET', '/auth/session', { session: before, origin: null })).status).toBe(401);
  });

  test('a wrong key opens no session: 401 and no cookie', async () => {
    const refused = await asConsole<ErrorBody>('POST', '/auth/key-session', { body: { key: 'ntk_00000000000000000000_' + 'x'.repeat(43) } });
    expect([refused.status, refused.body.error.code, setCookies(refused.res).has(sessionCookieName)]).toEqual([401, 'UNAUTHORIZED', false]);
  });

  test('where the platform admin requires single sign-on, a key session of a person’s key is refused as the key is', async () => {
    const person = await t.mintKey({ role: 'operator' });
    const { session } = await keySession(person.key);
    const sso = (required: boolean) => t.request('PUT', `/v1/workspaces/${person.org_id}/sso`, { key: t.adminKey, body: { required } });
    expect((await sso(true)).status).toBe(200);
    try {
      const refused = await asConsole<ErrorBody>('GET', '/v1/incidents', { session, origin: null });
      const reopened = await asConsole<ErrorBody>('POST', '/auth/key-session', { body: { key: person.key } });
      expect([refused.status, refused.body.error.code, reopened.status, reopened.body.error.code]).toEqual([403, 'SSO_REQUIRED', 403, 'SSO_REQUIRED']);
    } finally {
      await sso(false);
    }
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
  const signIns = signInBucketOf(config, t.stack.nats);
  await bucket.start();
  await signIns.start();
  const sessions = new SessionService({ store: bucket, signIns, limits: sessionLimitsOf(config), registry, now: () => clock.now });
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

describe('several API processes', () => {
  test('a session opened through one API process is used through another, and a logout through either ends it on both', async () => {
    const other = await apiWithSessionClock({ now: Date.now() });
    try {
      const { key } = await t.mintKey({ role: 'analyst' });
      const session = await other.open(key);
      const read = await asConsole<ConsoleSessionView>('GET', '/auth/session', { session, origin: null });
      expect([read.status, await other.read(session)]).toEqual([200, 200]);
      expect((await asConsole('POST', '/auth/logout', { session, csrf: read.body.csrf_token })).status).toBe(200);
      expect(await other.read(session)).toBe(401);
    } finally {
      await other.stop();
    }
  });
});

describe('sign-ins under way', () => {
  test('a sign-in is taken once: of callbacks racing with one cookie through two API processes, exactly one gets it', async () => {
    const { config } = t.stack;
    const serviceOf = async () => {
      const signIns = signInBucketOf(config, t.stack.nats);
      await signIns.start();
      return new SessionService({ store: sessionBucketOf(config, t.stack.nats), signIns, limits: sessionLimitsOf(config), registry: new Registry() });
    };
    const [one, two] = [await serviceOf(), await serviceOf()];
    for (let round = 0; round < 5; round += 1) {
      const id = await one.saveLogin({ state: 's'.repeat(32), nonce: 'n'.repeat(32), code_verifier: 'v'.repeat(43) });
      const taken = await Promise.all([one, two, one, two].map((s) => s.takeLogin(id)));
      expect(taken.filter((attempt) => attempt !== undefined)).toHaveLength(1);
    }
  });
});

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
