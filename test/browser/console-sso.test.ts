import { createHash } from 'node:crypto';
import { chromium, type Browser, type Page } from 'playwright-core';
import { names } from '../../streams/names';
import type { AuditEntryView, ConsoleSessionView, IncidentView, Page as ListPage, ReplayRequested } from '../support/api-types';
import { startConsoleStack, type ConsoleStack } from '../support/console-stack';
import { replayInStatus } from '../support/replays';
import { waitFor, waitForTelemetryDrained } from '../support/wait';
import { screenshotPath } from '../support/screenshots';

/**
 * The console's single sign-on in Debian's chromium against a whole stack
 * and the tests' OpenID provider: a person signs in through the provider's
 * own login page, approves a replay another person requested, and is named
 * in the ledger; then signs out at the service and the provider. The console
 * is reached as http://localhost and the provider as http://127.0.0.1: two
 * sites, so the provider's redirect back is the cross-site navigation it is
 * in production, and the SameSite cookies are tried for real.
 */
const chromiumArgs = ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync'];
const users = [
  { subject: 'u-olga', name: 'Olga Operator', email: 'olga@example.org', groups: ['noc-operators'] },
  { subject: 'u-amir', name: 'Amir Approver', email: 'amir@example.org', groups: ['noc-approvers'] },
  { subject: 'u-nora', name: 'Nora Nogroup', email: 'nora@example.org', groups: ['contractors'] },
  { subject: 'u-dave', name: 'Dave Two-Hats', email: 'dave@example.org', groups: ['noc-approvers', 'edge-analysts'] },
];

describe('single sign-on in the browser console', () => {
  let c: ConsoleStack;
  let browser: Browser;
  let admin: { key: string; org_id: string };
  let replayId: string;
  let olgaKeyId: string;
  let edge: { key: string; org_id: string };

  beforeAll(async () => {
    c = await startConsoleStack(users, { host: 'localhost', env: { ROLES: 'api,stream-workers,temporal-worker', WORKER_MAX_WAIT_MS: '20' } });
    browser = await chromium.launch({ executablePath: '/usr/bin/chromium', headless: true, args: chromiumArgs });
    admin = await c.t.mintKey({ role: 'admin' });
    const mappings = [{ group: 'noc-operators', roles: ['operator'] }, { group: 'noc-approvers', roles: ['approver'] }];
    expect((await c.t.request('PUT', '/v1/sso/group-mappings', { key: admin.key, body: { version: 0, mappings } })).status).toBe(200);
    edge = await c.t.mintKey({ role: 'admin' });
    const edgeMappings = [{ group: 'edge-analysts', roles: ['analyst'] }];
    expect((await c.t.request('PUT', '/v1/sso/group-mappings', { key: edge.key, body: { version: 0, mappings: edgeMappings } })).status).toBe(200);
    await requestReplayAsOlga();
  }, 180_000);

  afterAll(async () => {
    await browser?.close();
    await c?.stop();
  });

  /** Olga, through her provider access token: a policy asking for approval, an incident, and a replay of it waiting for a decision. */
  async function requestReplayAsOlga() {
    const olga = { authorization: `Bearer ${(await c.provider.tokensFor('u-olga')).access_token}` };
    olgaKeyId = (await c.t.request<{ key_id: string }>('GET', '/v1/whoami', { headers: olga })).body.key_id;
    await c.t.request('POST', '/v1/policies', { headers: olga, body: { name: 'prod needs a human', requires_approval: true, approval_timeout_minutes: 60 } });
    await c.t.request('POST', '/ingest', { headers: olga, body: { telemetry: 'bgp', service: 'edge', environment: 'prod', region: 'eu', latency_ms: 40 } });
    await waitForTelemetryDrained(c.t.stack.nats.jsm, c.t.stack.config.nats.prefix);
    const incident = await waitFor(async () => (await c.t.request<ListPage<IncidentView>>('GET', '/v1/incidents', { headers: olga })).body.data[0], 30_000, 'the incident');
    replayId = (await c.t.request<ReplayRequested>('POST', '/v1/replay', { headers: olga, body: { incident_id: incident.id } })).body.replay_id;
    await replayInStatus(c.t, admin.key, replayId, 'awaiting_approval');
  }

  /** A new browser at the provider's login page, through the console's button, with `subject` signed in there. */
  async function throughProvider(subject: string): Promise<Page> {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    await page.goto(c.origin);
    await page.getByRole('link', { name: 'Sign in with single sign-on' }).click();
    await page.waitForURL(`${c.provider.issuer}/**`);
    await page.locator('input[name="login"]').fill(subject);
    await page.locator('input[name="password"]').fill('any');
    await page.locator('button[type="submit"]').click();
    return page;
  }

  /** A new browser with `subject` signed in to the console through the provider. */
  async function signedInThroughProvider(subject: string): Promise<Page> {
    const page = await throughProvider(subject);
    await page.getByRole('navigation', { name: 'Views' }).waitFor({ timeout: 20_000 });
    return page;
  }

  test('a person signs in through the provider’s login page; the console shows their name, and no script can read a token', async () => {
    const page = await signedInThroughProvider('u-amir');
    expect(new URL(page.url()).origin).toBe(c.origin);
    await expectText(page.locator('header .who'), 'Amir Approver');
    expect(await page.locator('header .who').textContent()).toContain('approver');
    expect(await page.evaluate<string>('document.cookie')).toBe('');
    expect(await page.evaluate<number>('sessionStorage.length + localStorage.length')).toBe(0);
    const cookie = (await page.context().cookies(c.origin)).find((k) => k.name === '__Host-nettel_session');
    expect(cookie).toMatchObject({ httpOnly: true, secure: true, sameSite: 'Strict', path: '/' });
    await page.screenshot({ path: screenshotPath('sso-signed-in.png') });
    await page.context().close();
  });

  test('that person approves a replay another person requested, in the console, and the ledger names them', async () => {
    const page = await signedInThroughProvider('u-amir');
    await page.getByRole('link', { name: 'Approvals' }).click();
    const card = page.getByRole('article', { name: `Replay ${replayId}` });
    await expectText(card, 'prod needs a human');
    await card.getByLabel('Comment').fill('checked with the NOC');
    await card.getByRole('button', { name: 'Approve' }).click();
    await expectText(card.getByRole('status'), 'Decision sent: approve', 30_000);
    const done = await replayInStatus(c.t, admin.key, replayId, 'completed');
    const session = await page.evaluate<ConsoleSessionView>("fetch('/auth/session').then((r) => r.json())");
    const amir = await page.evaluate<{ key_id: string; person: { subject: string } }>("fetch('/v1/whoami').then((r) => r.json())");
    expect([session.person?.name, amir.person.subject]).toEqual(['Amir Approver', 'u-amir']);
    expect(done.approvals).toEqual([expect.objectContaining({ decision: 'approve', approver_key_id: amir.key_id })]);
    expect(amir.key_id).not.toBe(olgaKeyId);
    const entry = await waitFor(async () => {
      const ledger = await c.t.request<ListPage<AuditEntryView>>('GET', '/v1/audit?limit=50', { key: admin.key });
      return ledger.body.data.find((e) => e.action === 'replay.approve' && e.target === replayId);
    }, 10_000, 'the approval in the ledger');
    expect(entry.actor).toBe(amir.key_id);
    expect(entry.actor).toMatch(/^session:[0-9a-f]{20}$/);
    expect(entry.actor_person).toEqual({ subject: 'u-amir', name: 'Amir Approver', email: 'amir@example.org' });
    await page.context().close();
  });

  test('signing out ends the session at the service and sends the browser to the provider’s logout', async () => {
    const page = await signedInThroughProvider('u-amir');
    const id = (await page.context().cookies(c.origin)).find((k) => k.name === '__Host-nettel_session')!.value;
    // The service's own store: the session's entry, named by the hash of the browser's id (application/identity/session-service.ts).
    const bucket = await c.t.stack.nats.js().views.kv(names(c.t.stack.config.nats.prefix).sessionsBucket, { bindOnly: true });
    const stored = async () => (await bucket.get(`s.${createHash('sha256').update(id).digest('hex')}`))?.operation;
    expect(await stored()).toBe('PUT');
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.waitForURL(`${c.provider.issuer}/**`);
    expect(await stored()).not.toBe('PUT');
    const asBefore = await fetch(`${c.t.url}/auth/session`, { headers: { cookie: `__Host-nettel_session=${id}` } });
    expect(asBefore.status).toBe(401);
    const cookies = await page.context().cookies(c.origin);
    expect(cookies.find((k) => k.name === '__Host-nettel_session')).toBeUndefined();
    await page.context().close();
  });

  test('a person in no mapped group is told why on the sign-in page, and holds no session', async () => {
    const page = await throughProvider('u-nora');
    await expectText(page.getByRole('alert'), 'The sign-in did not finish', 20_000);
    expect(await page.getByRole('alert').textContent()).toContain('none of their groups is mapped to a workspace');
    expect((await page.context().cookies(c.origin)).some((k) => k.name === '__Host-nettel_session')).toBe(false);
    await page.context().close();
  });

  test('a person whose groups give roles in two workspaces picks one, and can switch from the header', async () => {
    const page = await throughProvider('u-dave');
    await page.getByRole('heading', { name: 'Choose a workspace' }).waitFor({ timeout: 20_000 });
    await page.getByRole('button', { name: edge.org_id }).click();
    await page.getByRole('navigation', { name: 'Views' }).waitFor();
    // The roles the header shows for the session, not the picker's options (which name every workspace's roles).
    const shownRoles = () =>
      page.evaluate<string>("(() => { const shown = document.querySelector('header .who').cloneNode(true); shown.querySelector('select')?.remove(); return shown.textContent; })()");
    await waitFor(async () => ((await shownRoles()).includes('analyst') ? true : undefined), 10_000, 'the analyst role');
    await page.getByLabel('Workspace').selectOption(admin.org_id);
    await waitFor(async () => ((await shownRoles()).includes('approver') ? true : undefined), 10_000, 'the approver role');
    expect(await shownRoles()).not.toContain('analyst');
    const session = await page.evaluate<ConsoleSessionView>("fetch('/auth/session').then((r) => r.json())");
    expect([session.workspace, session.roles]).toEqual([admin.org_id, ['approver']]);
    await page.context().close();
  });

  test('a session that ends elsewhere takes the console back to its sign-in page, saying so', async () => {
    const page = await signedInThroughProvider('u-amir');
    const { csrf_token } = await page.evaluate<ConsoleSessionView>("fetch('/auth/session').then((r) => r.json())");
    const cookie = (await page.context().cookies(c.origin)).find((k) => k.name === '__Host-nettel_session')!;
    const ended = await fetch(`${c.t.url}/auth/logout`, { method: 'POST', headers: { cookie: `${cookie.name}=${cookie.value}`, origin: c.origin, 'x-csrf-token': csrf_token } });
    expect(ended.status).toBe(200);
    await page.getByRole('link', { name: 'Approvals' }).click();
    await expectText(page.getByRole('alert'), 'Your session ended', 20_000);
    await page.context().close();
  });
});

async function expectText(locator: ReturnType<Page['locator']>, text: string, timeoutMs = 10_000): Promise<void> {
  await waitFor(async () => ((await locator.first().textContent())?.includes(text) ? true : undefined), timeoutMs, `text "${text}"`);
}
