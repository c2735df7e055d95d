import { chromium, type Browser } from 'playwright-core';
import type { IncidentView, Page } from '../support/api-types';
import { attackers, synFlood } from '../support/detection-flows';
import { screenshotPath } from '../support/screenshots';
import { startTestStack, type TestStack } from '../support/test-stack';
import { waitFor, waitForDetectionDrained, waitForTelemetryDrained } from '../support/wait';

/**
 * The incident page of a rate detector's incident, in Debian's chromium: a
 * SYN flood posted over HTTP opens the incident, and its page shows the
 * attack the detectors saw (type, rates, top sources, destination ports).
 */
const chromiumArgs = ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync'];

describe('the attack on the incident page', () => {
  let t: TestStack;
  let browser: Browser;

  beforeAll(async () => {
    t = await startTestStack('chdb', { ROLES: 'api,stream-workers', WORKER_MAX_WAIT_MS: '20' });
    browser = await chromium.launch({ executablePath: '/usr/bin/chromium', headless: true, args: chromiumArgs });
  });
  afterAll(async () => {
    await browser?.close();
    await t?.stop();
  });

  test("a SYN flood's incident page names the attack type, its rates, its top sources and the port it hit", async () => {
    const { key } = await t.mintKey({ role: 'operator' });
    expect((await t.request('PUT', '/v1/detection-rules', { key, body: { rates: { thresholds: { total: { pps: 3_000 } } } } })).status).toBe(200);
    const flood = synFlood('203.0.113.9', Date.now() - 60_000, 12);
    for (let i = 0; i < flood.length; i += 500) expect((await t.request('POST', '/flow', { key, body: flood.slice(i, i + 500) })).status).toBe(201);
    await waitForTelemetryDrained(t.stack.nats.jsm, t.stack.config.nats.prefix);
    await waitForDetectionDrained(t.stack.nats.jsm, t.stack.config.nats.prefix);
    const incident = await waitFor(async () => (await t.request<Page<IncidentView>>('GET', '/v1/incidents', { key })).body.data[0], 30_000, 'the incident');

    const page = await browser.newPage({ viewport: { width: 1280, height: 1400 } });
    await page.goto(t.url);
    await page.getByLabel('API key').fill(key);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('navigation', { name: 'Views' }).waitFor();
    await page.goto(`${t.url}/#/incidents/${incident.id}`);
    const attack = page.getByRole('region', { name: 'Attack' });
    await attack.waitFor();
    expect(await attack.getByRole('heading').first().textContent()).toBe('Attack: syn flood');
    expect(await attack.locator('dd').nth(1).textContent()).toMatch(/^[\d,]+ packets\/s · [\d.,]+ [kMG]?bit\/s · [\d,]+ flows\/s$/);
    const sources = await attack.getByRole('table', { name: 'Top sources' }).locator('tbody tr td:first-child').allTextContents();
    expect(sources).toEqual([...attackers].reverse());
    const ports = await attack.getByRole('table', { name: 'Top destination ports' }).locator('tbody tr td:first-child').allTextContents();
    expect(ports).toEqual(['80']);
    await page.screenshot({ path: screenshotPath('incident-attack.png'), fullPage: true });
    await page.close();
  });
});
