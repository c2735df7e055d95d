import type { AuditEntryView, ConsoleSessionView, ErrorBody, Page } from '../support/api-types';
import { setCookies, signInThroughConsole } from '../support/console-sign-in';
import { startConsoleStack, type ConsoleStack } from '../support/console-stack';
import type { TestOidcProvider } from '../support/oidc-provider';
import type { TestStack } from '../support/test-stack';
import { names } from '../../streams/names';
import { waitFor } from '../support/wait';

/**
 * The console's single sign-on on a whole stack and a real OpenID provider
 * on loopback, walked over HTTP as a browser walks it: the redirect with
 * PKCE, the callback, the person's session, their workspaces and the choice
 * among them, group mappings changed under an open session, a person in no
 * mapped group, RP-initiated logout. test/browser/console-sso.test.ts walks
 * it in chromium.
 */
const users = [
  { subject: 'u-nogroup', name: 'Nora Nogroup', email: 'nora@example.org', groups: ['contractors'] },
  { subject: 'u-alice', name: 'Alice Martin', email: 'alice@example.org', groups: ['noc'] },
  { subject: 'u-dave', name: 'Dave Two-Hats', email: 'dave@example.org', groups: ['noc', 'edge-analysts'] },
];

const anyString = (): unknown => expect.any(String);
const matching = (pattern: RegExp): unknown => expect.stringMatching(pattern);
const containing = (text: string): unknown => expect.stringContaining(text);

const signInsMaxBytes = 64 * 1024;

let c: ConsoleStack;
let t: TestStack;
let provider: TestOidcProvider;
let origin: string;
let asConsole: ConsoleStack['asConsole'];

beforeAll(async () => {
  // The sign-ins under way at their smallest bound, so a flood of them reaches it (the last describe).
  c = await startConsoleStack(users, { env: { SESSION_SIGN_INS_MAX_BYTES: String(signInsMaxBytes) } });
  ({ t, provider, origin, asConsole } = c);
}, 120_000);

afterAll(async () => {
  await c?.stop();
});

/** The first entry of the platform's ledger (`_platform`) that `match` accepts, waiting for it a little. */
function platformEntry(match: (entry: AuditEntryView) => boolean): Promise<AuditEntryView> {
  return waitFor(async () => (await t.request<Page<AuditEntryView>>('GET', '/v1/audit?org_id=_platform&limit=100', { key: t.adminKey })).body.data.find(match), 10_000, 'the ledger entry');
}

describe('single sign-on', () => {
  test('GET /auth/config tells the console single sign-on is configured, and that a browser without a session is signed out', async () => {
    expect((await t.request('GET', '/auth/config')).body).toEqual({ single_sign_on: true, signed_in: false });
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

  test('the refused sign-in is in the platform’s ledger, naming the person', async () => {
    await signInThroughConsole(t.url, provider.issuer, 'u-nogroup');
    const entry = await platformEntry((e) => e.action === 'sign_in.failure' && e.actor_person?.subject === 'u-nogroup');
    expect(entry).toMatchObject({ actor: 'anonymous', target: 'FORBIDDEN', details: { via: 'console' } });
  });

  test('a browser coming back from the provider with no mapped group is shown the sign-in page with the reason', async () => {
    const { callback, session } = await signInThroughConsole(t.url, provider.issuer, 'u-nogroup', 'text/html');
    expect([callback.status, session]).toEqual([303, undefined]);
    expect(callback.headers.get('location')).toMatch(/^\/#\/sign-in-failed\?reason=.*none%20of%20their%20groups/);
  });

  test('a provider error that is not an OAuth error code (free text to show the person) is refused 400', async () => {
    const res = await fetch(`${t.url}/auth/callback?state=x&error=${encodeURIComponent('Call +1 555 0100 to restore access')}`);
    expect([res.status, ((await res.json()) as ErrorBody).error.details?.[0]?.path]).toEqual([400, 'error']);
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

  test('the sign-in is in the platform’s ledger: the session’s credential, the person, their workspaces', async () => {
    const { session } = await personSession('u-alice');
    const me = await asConsole<{ key_id: string }>('GET', '/v1/whoami', { session, origin: null });
    const entry = await platformEntry((e) => e.action === 'sign_in.console' && e.actor === me.body.key_id);
    expect(entry).toMatchObject({ target: 'u-alice', actor_person: { subject: 'u-alice', name: 'Alice Martin' }, details: { workspaces: [first.org_id] } });
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

  test('a person’s logout answers the provider’s RP-initiated logout naming the client, not the ID token, and the console as the way back', async () => {
    const { session, view } = await personSession('u-alice');
    const out = await asConsole<{ logout_url: string }>('POST', '/auth/logout', { session, csrf: view.csrf_token });
    const url = new URL(out.body.logout_url);
    expect([out.status, url.origin]).toEqual([200, provider.issuer]);
    expect(url.searchParams.get('id_token_hint')).toBeNull();
    expect(url.searchParams.get('client_id')).toBe(provider.clientId);
    expect(url.searchParams.get('post_logout_redirect_uri')).toBe(`${origin}/`);
    expect((await asConsole('GET', '/auth/session', { session, origin: null })).status).toBe(401);
    // oidc-provider takes it: its logout page asks the person to confirm (a 200 form), where a refused request is 400.
    const atProvider = await fetch(url, { redirect: 'manual' });
    expect(atProvider.status).toBe(200);
    expect(await atProvider.text()).toContain('logout');
  });

  test('the session bucket holds no token of the provider: what NATS users could read replays nothing', async () => {
    await personSession('u-alice');
    const bucket = await t.stack.nats.js().views.kv(names(t.stack.config.nats.prefix).sessionsBucket, { bindOnly: true });
    const values: string[] = [];
    for await (const key of await bucket.keys()) {
      const entry = await bucket.get(key);
      if (entry?.operation === 'PUT') values.push(entry.string());
    }
    expect(values.some((v) => v.includes('"kind":"person"'))).toBe(true);
    expect(values.filter((v) => /eyJ[A-Za-z0-9_-]+\./.test(v) || v.includes('id_token'))).toEqual([]);
  });

  test('a callback replayed with the same code and sign-in cookie is refused', async () => {
    const first = await fetch(`${t.url}/auth/login`, { redirect: 'manual' });
    const login = setCookies(first).get('__Host-nettel_login')!.value;
    const replay = await fetch(`${t.url}/auth/callback?code=x&state=y`, { headers: { cookie: `__Host-nettel_login=${login}` } });
    const again = await fetch(`${t.url}/auth/callback?code=x&state=y`, { headers: { cookie: `__Host-nettel_login=${login}` } });
    expect([replay.status, again.status]).toEqual([401, 400]);
  });
});

describe('sign-ins under way, which requests without credentials write', () => {
  /** What the console's buckets hold (sessions and sign-ins under way), in bytes; a bucket not made yet holds none. */
  async function consoleBucketBytes(): Promise<number> {
    const n = names(t.stack.config.nats.prefix);
    let total = 0;
    for (const bucket of [n.sessionsBucket, n.signInsBucket]) {
      total += await t.stack.nats.jsm.streams.info(`KV_${bucket}`).then((i) => i.state.bytes, () => 0);
    }
    return total;
  }

  test('a flood of GET /auth/login does not grow JetStream past the bound: past it, 503 with Retry-After, and the sessions are untouched', async () => {
    const before = await consoleBucketBytes();
    const statuses = new Map<number, number>();
    let refusal: Response | undefined;
    for (let i = 0; i < 400; i += 1) {
      const res = await fetch(`${t.url}/auth/login`, { redirect: 'manual' });
      statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
      if (res.status === 503) refusal ??= res;
      else await res.arrayBuffer();
    }
    expect(await consoleBucketBytes()).toBeLessThanOrEqual(before + signInsMaxBytes);
    expect(statuses.get(302)).toBeGreaterThan(50);
    expect(statuses.get(503)).toBeGreaterThan(0);
    expect([refusal?.headers.get('retry-after'), ((await refusal?.json()) as ErrorBody).error.code]).toEqual(['60', 'UNAVAILABLE']);
    // A person signed in before keeps their session: the bound is the sign-ins' own.
    const key = (await t.mintKey({ role: 'analyst' })).key;
    expect((await asConsole('POST', '/auth/key-session', { body: { key } })).status).toBe(201);
  });
});
