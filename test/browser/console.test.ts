import fs from 'node:fs';
import { chromium, type Browser, type Page } from 'playwright-core';
import { startTestStack, type MintedTestKey, type TestStack } from '../support/test-stack';
import type { IncidentView, Page as ListPage, ReplayRequested, ReplayView } from '../support/api-types';
import { waitFor, waitForTelemetryDrained } from '../support/wait';
import { screenshotPath } from '../support/screenshots';

/**
 * The browser console (console/, served at `/`) in Debian's chromium, driven
 * by playwright-core against a whole stack on the real engines: sign-in by
 * role, incidents, approvals with four eyes, a replay to its parity report,
 * top talkers, errors, and an accessibility pass (axe-core) on every view.
 */
const axeSource = fs.readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');
const chromiumArgs = ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync'];

describe('the browser console', () => {
  let t: TestStack;
  let browser: Browser;
  let keys: Record<'admin' | 'operator' | 'approver' | 'analyst' | 'operatorApprover', MintedTestKey>;
  let incident: IncidentView;
  let replayId: string;

  beforeAll(async () => {
    t = await startTestStack('chdb', {
      ROLES: 'api,stream-workers,temporal-worker',
      WORKER_MAX_WAIT_MS: '20',
      TEMPORAL_UI_URL: process.env.TEST_TEMPORAL_UI_URL ?? '',
    });
    browser = await chromium.launch({ executablePath: '/usr/bin/chromium', headless: true, args: chromiumArgs });
    const operator = await t.mintKey({ role: 'operator', owner: { subject: 'console-alice', name: 'Alice Operator' } });
    const orgId = operator.org_id;
    keys = {
      operator,
      admin: await t.mintKey({ role: 'admin', orgId }),
      approver: await t.mintKey({ role: 'approver', orgId, owner: { subject: 'console-bob', name: 'Bob Approver' } }),
      analyst: await t.mintKey({ role: 'analyst', orgId }),
      // The operator's own person, with an approver key too: four eyes compares persons.
      operatorApprover: await t.mintKey({ role: 'approver', orgId, owner: operator.owner }),
    };
    await seedWorkspace(operator.key);
  });
  afterAll(async () => {
    await browser?.close();
    await t?.stop();
  });

  /** Flows with known volumes, an incident of `edge` and one of `db`, a policy asking for approval, and a waiting replay. */
  async function seedWorkspace(key: string) {
    const flows = [
      { src_ip: '10.9.0.1', dst_ip: '10.0.0.2', bytes: 123456, packets: 100, protocol: 'tcp', dst_port: 443 },
      { src_ip: '10.9.0.2', dst_ip: '10.0.0.2', bytes: 65432, packets: 50, protocol: 'udp', dst_port: 53 },
    ];
    expect((await t.request('POST', '/flow', { key, body: flows })).status).toBe(201);
    await t.request('POST', '/ingest', { key, body: { telemetry: 'bgp', service: 'edge', environment: 'prod', region: 'eu', latency_ms: 40, dst_ip: '10.0.0.2' } });
    await t.request('POST', '/ingest', { key, body: { telemetry: 'dns', service: 'edge', environment: 'prod', region: 'eu', latency_ms: 75, src_ip: '10.9.0.1', dst_ip: '10.0.0.53', dst_port: 53 } });
    await t.request('POST', '/ingest', { key, body: { telemetry: 'dns', service: 'db', environment: 'staging', region: 'eu', latency_ms: 20 } });
    await waitForTelemetryDrained(t.stack.nats.jsm, t.stack.config.nats.prefix);
    const list = await t.request<ListPage<IncidentView>>('GET', '/v1/incidents?service=edge', { key });
    incident = list.body.data[0]!;
    await t.request('POST', '/v1/policies', { key, body: { name: 'prod needs a human', requires_approval: true, approval_timeout_minutes: 60 } });
    const requested = await t.request<ReplayRequested>('POST', '/v1/replay', { key, body: { incident_id: incident.id } });
    replayId = requested.body.replay_id;
    await waitFor(async () => ((await t.request<ReplayView>('GET', `/v1/replays/${replayId}`, { key })).body.status === 'awaiting_approval' ? true : undefined), 30_000, 'awaiting_approval');
  }

  async function signedIn(key: string): Promise<Page> {
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    await page.goto(t.url);
    await page.getByLabel('API key').fill(key);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('navigation', { name: 'Views' }).waitFor();
    return page;
  }

  /** axe-core's serious and critical violations on the page as it is now. */
  async function seriousViolations(page: Page): Promise<string[]> {
    await page.evaluate(axeSource);
    // Page code as strings: the test's TypeScript has no DOM types.
    const result = await page.evaluate<{ violations: { id: string; impact: string | null; nodes: unknown[] }[] }>("axe.run({ resultTypes: ['violations'] })");
    return result.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => `${v.id} (${v.nodes.length})`);
  }

  test('the first view loads in under a second with the service idle (measured and reported)', async () => {
    const page = await browser.newPage();
    const started = Date.now();
    await page.goto(t.url);
    await page.getByLabel('API key').waitFor();
    const elapsed = Date.now() - started;
    const loadEventEnd = await page.evaluate<number>("performance.getEntriesByType('navigation')[0].loadEventEnd");
    process.stdout.write(`console first view: sign-in form usable after ${elapsed} ms (load event at ${Math.round(loadEventEnd)} ms)\n`);
    await page.screenshot({ path: screenshotPath('sign-in.png') });
    await page.close();
  });

  test('the console is served with a strict CSP and cache headers, and unknown API paths stay JSON 404s', async () => {
    const index = await fetch(`${t.url}/`);
    expect(index.headers.get('content-security-policy')).toContain("script-src 'self'");
    expect(index.headers.get('cache-control')).toBe('no-cache');
    const asset = /src="(\/assets\/[^"]+\.js)"/.exec(await index.text())![1]!;
    const js = await fetch(`${t.url}${asset}`);
    expect(js.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    const unknown = await t.request('GET', '/v1/nothing-here', { key: keys.analyst.key });
    expect([unknown.status, unknown.body]).toEqual([404, { error: { code: 'NOT_FOUND', message: 'no route for GET /v1/nothing-here' } }]);
    expect((await t.request('GET', '/v1/console-config')).body).toEqual({ temporal_ui_url: process.env.TEST_TEMPORAL_UI_URL ?? null });
    expect((await t.request('GET', '/v1/whoami', { key: keys.approver.key })).body).toEqual({
      kind: 'workspace', key_id: keys.approver.key_id, org_id: keys.approver.org_id, role: 'approver', roles: ['approver'], person: keys.approver.owner, via: 'api_key', permissions: ['read', 'approve', 'audit:read'],
    });
  });

  test('the sign-in page loads without an error in the browser console or a failed request', async () => {
    const page = await browser.newPage();
    const problems: string[] = [];
    page.on('console', (m) => (m.type() === 'error' ? problems.push(m.text()) : undefined));
    page.on('response', (r) => (r.status() >= 400 ? problems.push(`${r.status()} ${r.url()}`) : undefined));
    await page.goto(`${t.url}/`, { waitUntil: 'networkidle' });
    const icon = await fetch(`${t.url}/favicon.ico`);
    await page.close();
    expect(problems).toEqual([]);
    expect([icon.status, icon.headers.get('content-type')]).toEqual([200, 'image/svg+xml']);
  });

  test('a wrong key shows a clear error, not a blank page', async () => {
    const page = await browser.newPage();
    await page.goto(t.url);
    await page.getByLabel('API key').fill('ntk_0000000000_not-a-real-key');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expectText(page.getByRole('alert'), 'This key was refused');
    expect(await page.evaluate<number>('sessionStorage.length')).toBe(0);
    await page.close();
  });

  test('an analyst filters incidents, opens one, and sees top talkers with the posted numbers', async () => {
    const page = await signedIn(keys.analyst.key);
    await page.getByLabel('Service').fill('edge');
    const rows = page.locator('tbody tr');
    await waitFor(async () => ((await rows.count()) === 1 && (await rows.first().textContent())?.includes('edge') ? true : undefined), 10_000, 'the filtered list');
    await page.screenshot({ path: screenshotPath('incidents.png') });
    await page.getByRole('link', { name: incident.id }).click();
    const bars = page.getByRole('figure', { name: 'Top sources by bytes' });
    await expectText(bars, '10.9.0.1');
    expect(await bars.textContent()).toContain('123,456 B');
    expect(await bars.textContent()).toContain('65,432 B');
    expect(await page.getByRole('button', { name: 'Acknowledge' }).count()).toBe(0);
    await page.screenshot({ path: screenshotPath('incident-detail.png'), fullPage: true });
    await page.close();
  });

  test("an analyst opens an incident and sees each of its signals on the timeline", async () => {
    const page = await signedIn(keys.analyst.key);
    await page.goto(`${t.url}/#/incidents/${incident.id}`);
    const rows = page.getByRole('table', { name: 'Signals of this incident' }).locator('tbody tr');
    await waitFor(async () => ((await rows.count()) === 2 ? true : undefined), 10_000, 'two signals on the timeline');
    const texts = await rows.allTextContents();
    expect(texts[0]).toContain('bgp');
    expect(texts[0]).toContain('40 ms');
    expect(texts[1]).toContain('dns');
    expect(texts[1]).toContain('10.9.0.1 → 10.0.0.53:53');
    expect(await page.getByRole('img', { name: /^2 signals from/ }).count()).toBe(1);
    await page.close();
  });

  test('an approval shows the policy that asked for it and the time left until the deadline the workflow set', async () => {
    const replay = (await t.request<ReplayView>('GET', `/v1/replays/${replayId}`, { key: keys.analyst.key })).body;
    expect(replay.decision_deadline).not.toBeNull();
    const page = await signedIn(keys.analyst.key);
    await page.getByRole('link', { name: 'Approvals' }).click();
    const card = page.getByRole('article', { name: `Replay ${replayId}` });
    await expectText(card, 'prod needs a human');
    const deadline = card.locator('time[datetime]');
    expect(await deadline.getAttribute('datetime')).toBe(replay.decision_deadline);
    expect(await deadline.textContent()).toMatch(/^about \d+ min$/);
    await page.close();
  });

  test('an analyst key sees no approve button at all', async () => {
    const page = await signedIn(keys.analyst.key);
    await page.getByRole('link', { name: 'Approvals' }).click();
    await page.getByRole('article', { name: `Replay ${replayId}` }).waitFor();
    expect(await page.getByRole('button', { name: 'Approve' }).count()).toBe(0);
    await page.close();
  });

  test("the requester's own approver key sees the approve button disabled, and why", async () => {
    const page = await signedIn(keys.operatorApprover.key);
    await page.getByRole('link', { name: 'Approvals' }).click();
    const approve = page.getByRole('article', { name: `Replay ${replayId}` }).getByRole('button', { name: 'Approve' });
    await approve.waitFor();
    expect(await approve.isDisabled()).toBe(true);
    await expectText(page.locator('.note'), 'another approver must decide');
    await page.close();
  });

  test('an approver approves a waiting replay with a comment and watches it reach completed with its parity report', async () => {
    const page = await signedIn(keys.approver.key);
    await page.getByRole('link', { name: 'Approvals' }).click();
    const card = page.getByRole('article', { name: `Replay ${replayId}` });
    await expectText(card, 'prod needs a human');
    await page.screenshot({ path: screenshotPath('approvals.png') });
    await card.getByLabel('Comment').fill('checked with the NOC');
    await card.getByRole('button', { name: 'Approve' }).click();
    // The decision is a Temporal update the worker must take: under a loaded machine it can take seconds.
    await expectText(card.getByRole('status'), 'Decision sent: approve', 30_000);
    await page.goto(`${t.url}/#/replays/${replayId}`);
    await expectText(page.getByTestId('replay-status'), 'completed', 30_000);
    await expectText(page.getByTestId('parity'), 'parity');
    expect(await page.locator('main').textContent()).toContain('checked with the NOC');
    await page.screenshot({ path: screenshotPath('replay-report.png'), fullPage: true });
    await page.close();
  });

  test('a 503 from the API shows a retryable message', async () => {
    const page = await signedIn(keys.analyst.key);
    let unavailable = true;
    await page.route('**/v1/incidents?*', (route) =>
      unavailable
        ? route.fulfill({ status: 503, contentType: 'application/json', headers: { 'retry-after': '2' }, body: JSON.stringify({ error: { code: 'UNAVAILABLE', message: 'NATS is unavailable' } }) })
        : route.continue(),
    );
    await page.getByLabel('Service').fill('db');
    const alert = page.getByRole('alert');
    await expectText(alert, 'The service is unavailable right now');
    unavailable = false;
    await alert.getByRole('button', { name: 'Retry' }).click();
    await waitFor(async () => ((await page.getByRole('alert').count()) === 0 ? true : undefined), 10_000, 'the error to clear');
    await page.close();
  });

  test('every view passes an accessibility check with no serious or critical violation', async () => {
    const page = await signedIn(keys.admin.key);
    const found: Record<string, string[]> = {};
    for (const view of ['incidents', `incidents/${incident.id}`, 'approvals', 'replays', `replays/${replayId}`, 'automations', 'telemetry', 'exporters', 'keys', 'audit']) {
      await page.goto(`${t.url}/#/${view}`);
      await page.locator('main h2').first().waitFor();
      await page.waitForLoadState('networkidle').catch(() => undefined);
      found[view] = await seriousViolations(page);
      if (['telemetry', 'audit'].includes(view)) await page.screenshot({ path: screenshotPath(`${view}.png`), fullPage: true });
    }
    await page.evaluate('sessionStorage.clear()');
    await page.goto(t.url);
    await page.reload();
    found['sign-in'] = await seriousViolations(page);
    expect(found).toEqual(Object.fromEntries(Object.keys(found).map((k) => [k, []])));
    await page.close();
  });

  test('a workspace whose playbooks act with no policy gating them is told so on the automations view', async () => {
    const operator = await t.mintKey({ role: 'operator' });
    const playbooks = [{ id: 'notify', name: 'Tell the NOC', match: {}, actions: [{ type: 'webhook' }] }];
    expect((await t.request('PUT', '/v1/playbooks', { key: operator.key, body: { playbooks } })).status).toBe(200);
    const page = await signedIn(operator.key);
    await page.goto(`${t.url}/#/automations`);
    await expectText(page.getByRole('alert'), "Nobody decides this workspace's automations.");
    await page.close();
  });
});

async function expectText(locator: { textContent(): Promise<string | null>; first(): { waitFor(o?: object): Promise<void> } }, text: string, timeoutMs = 10_000): Promise<void> {
  await locator.first().waitFor({ timeout: timeoutMs });
  await waitFor(async () => ((await locator.textContent())?.includes(text) ? true : undefined), timeoutMs, `text "${text}"`);
}
