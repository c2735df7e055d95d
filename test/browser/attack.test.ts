import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chromium, type Browser } from 'playwright-core';
import { localGobgpServer } from '../../engines/gobgp';
import { freePort, type LocalProcess } from '../../engines/local-process';
import { createLogger } from '../../observability/logger';
import { loadConfig } from '../../service/config';
import type { AuditEntryView, AutomationView, IncidentView, Page } from '../support/api-types';
import { birdc, birdFlowTable, birdSocket, localBird } from '../../bench/bird';
import { registerExporter, startCollectorStack } from '../support/collector';
import { softflowdExport } from '../support/flow-exporters';
import { writePcap, type PcapFlow } from '../support/pcap';
import type { TestStack } from '../support/test-stack';
import { waitFor } from '../support/wait';
import { WebhookReceiver } from '../support/webhook-receiver';

/**
 * An attack end to end, on real peers only: softflowd reads a capture of an
 * NTP amplification flood (UDP from port 123 of five reflectors) towards an
 * address of the workspace's approved prefix and sends NetFlow v9 to the
 * collector (GoFlow2); the traffic incident opens; the workspace's playbook
 * starts a run that a policy holds for approval, with a preview naming the
 * reflectors and their share; an approver approves it in the console, in
 * Debian's chromium; gobgpd announces the flowspec rule to BIRD 2; at the end
 * of its minute the rule leaves BIRD; the audit ledger holds every step and a
 * webhook receiver got every event.
 */
const log = createLogger(process.env.TEST_LOGS ? 'info' : 'silent');
const config = loadConfig(process.env);
const asn = 65001;
const victim = '198.51.100.7';
const reflectors = [1, 2, 3, 4, 5].map((i) => `203.0.113.${i}`);
const chromiumArgs = ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync'];

describe('an NTP amplification flood, mitigated by flowspec after an approval in the console', () => {
  let dir: string;
  let gobgpd: LocalProcess;
  let bird: LocalProcess;
  let t: TestStack;
  let netflowPort: number;
  let browser: Browser;
  const receiver = new WebhookReceiver();
  const flowTable = () => birdc(birdSocket(path.join(dir, 'bird')), config.binPath, ['show', 'route', 'table', birdFlowTable, 'all']);

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'attack-'));
    const [bgpPort, apiPort, birdPort] = await Promise.all([freePort(), freePort(), freePort()]);
    gobgpd = localGobgpServer({ dir: path.join(dir, 'gobgpd'), bgpPort, apiPort, asn, routerId: '127.0.0.1', binPath: config.binPath, toolsDir: config.toolsDir }, log);
    bird = localBird({ dir: path.join(dir, 'bird'), binPath: config.binPath, address: '127.0.0.2', port: birdPort, asn, speaker: { address: '127.0.0.1', port: bgpPort, asn }, discardNextHop: '192.0.2.1' }, log);
    await Promise.all([gobgpd.start(), bird.start(), receiver.start()]);
    ({ t, netflowPort } = await startCollectorStack('chdb', {
      ROLES: 'api,stream-workers,collector,temporal-worker',
      BGP_SPEAKER_ADDRESS: `127.0.0.1:${apiPort}`,
      BGP_NEIGHBORS: `127.0.0.2:${birdPort}@${asn}`,
      WEBHOOK_ALLOWED_HOSTS: '127.0.0.1',
    }));
    browser = await chromium.launch({ executablePath: '/usr/bin/chromium', headless: true, args: chromiumArgs });
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await t?.stop();
    await Promise.all([gobgpd?.stop(), bird?.stop(), receiver.stop()]);
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const events = ['incident.opened', 'automation.awaiting_approval', 'automation.executed', 'automation.withdrawn'];

  /**
   * The workspace: its prefix (approved by the platform admin), its router, a webhook, a policy asking for a human,
   * detection at 1 MB a minute towards one destination, and a playbook discarding NTP replies towards it.
   */
  async function defendedWorkspace() {
    const admin = await t.mintKey({ role: 'admin' });
    const operator = await t.mintKey({ role: 'operator', orgId: admin.org_id });
    const approver = await t.mintKey({ role: 'approver', orgId: admin.org_id });
    const org = admin.org_id;
    const prefix = await t.request<{ id: string }>('POST', '/v1/prefixes', { key: admin.key, body: { prefix: '198.51.100.0/24' } });
    expect((await t.request('POST', `/v1/prefixes/${prefix.body.id}/approve`, { key: t.adminKey })).status).toBe(200);
    await registerExporter(t, admin.key, '127.0.0.41');
    expect((await t.request('POST', '/v1/webhooks', { key: admin.key, body: { url: receiver.url(), events } })).status).toBe(201);
    expect((await t.request('POST', '/v1/policies', { key: operator.key, body: { name: 'mitigations need a human', requires_approval: true } })).status).toBe(201);
    expect((await t.request('PUT', '/v1/detection-rules', { key: operator.key, body: { traffic_bytes_per_minute: 1_000_000 } })).status).toBe(200);
    const playbook = { id: 'ntp-amplification', name: 'discard NTP replies', match: { rules: ['traffic_volume'], destinations: ['198.51.100.0/24'] }, actions: [{ type: 'flowspec_discard', duration_minutes: 1, protocols: ['udp'], source_ports: [123] }] };
    expect((await t.request('PUT', '/v1/playbooks', { key: operator.key, body: { playbooks: [playbook] } })).status).toBe(200);
    return { admin, operator, approver, org };
  }

  /** The approver, in the console: the run's card shows the reflectors it would drop; Approve. */
  async function approveInConsole(key: string, automationId: string) {
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    await page.goto(t.url);
    await page.getByLabel('API key').fill(key);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('link', { name: 'Automations' }).click();
    const card = page.getByRole('article', { name: `Automation ${automationId}` });
    await card.waitFor();
    for (const reflector of reflectors) expect(await card.textContent()).toContain(reflector);
    await card.getByLabel('Comment').fill('NTP reflection, preview checked');
    await card.getByRole('button', { name: 'Approve' }).click();
    await card.getByRole('status').waitFor();
    return page;
  }

  test('the flood opens an incident, an approver approves the previewed flowspec rule in the console, BIRD carries it for its minute, and every step is audited and notified', async () => {
    const { admin, operator, approver, org } = await defendedWorkspace();

    // The flood: 5 reflectors × 300 replies of 1,200 bytes, beside a little legitimate HTTPS, exported by softflowd.
    const flows: PcapFlow[] = [
      ...reflectors.map((src) => ({ src, dst: victim, protocol: 'udp' as const, srcPort: 123, dstPort: 40_000, packets: 300, payloadBytes: 1_200 })),
      { src: '192.0.2.50', dst: victim, protocol: 'tcp', srcPort: 51_000, dstPort: 443, packets: 40, payloadBytes: 500 },
    ];
    const pcap = path.join(dir, 'flood.pcap');
    writePcap(pcap, flows, { startMs: Date.now() - 5_000 });
    await softflowdExport({ pcap, port: netflowPort, version: 9, sourceIp: '127.0.0.41' });

    const incident = await waitFor(async () => (await t.request<Page<IncidentView>>('GET', `/v1/incidents?service=${victim}`, { key: operator.key })).body.data[0], 30_000, 'the traffic incident');
    expect(incident.rule).toBe('traffic_volume>=1000000B/min');
    const run = await waitFor(async () => {
      const r = (await t.request<Page<AutomationView>>('GET', `/v1/automations?incident_id=${incident.id}`, { key: operator.key })).body.data[0];
      return r?.status === 'awaiting_approval' ? r : undefined;
    }, 30_000, 'the run awaiting approval');
    const preview = run.actions[0]!.preview!;
    expect(preview.top_sources.map((s) => s.src_ip).sort()).toEqual(reflectors);
    expect(preview.share).toBeGreaterThan(0.95);
    expect(preview.share).toBeLessThan(1);
    expect(await flowTable()).not.toContain(`${victim}/32`);

    const page = await approveInConsole(approver.key, run.automation_id);
    await waitFor(async () => ((await flowTable()).includes(`${victim}/32`) ? true : undefined), 20_000, 'the flowspec rule in BIRD');
    expect(await flowTable()).toContain('sport 123');
    await page.getByRole('row', { name: new RegExp(`flowspec_discard ${victim.replace(/\./g, '\\.')}/32`) }).waitFor();
    await page.close();

    // At the end of its minute the rule leaves BIRD, and the run completes.
    const active = (await t.request<AutomationView>('GET', `/v1/automations/${run.automation_id}`, { key: operator.key })).body;
    const endsAt = Date.parse(active.actions[0]!.ends_at!);
    await waitFor(async () => ((await flowTable()).includes(`${victim}/32`) ? undefined : true), 90_000, 'the flowspec rule gone at its end');
    expect(Date.now()).toBeGreaterThanOrEqual(endsAt);
    await waitFor(async () => ((await t.request<AutomationView>('GET', `/v1/automations/${run.automation_id}`, { key: operator.key })).body.status === 'completed' ? true : undefined), 30_000, 'the run completed');

    const audit = (await t.request<Page<AuditEntryView>>('GET', '/v1/audit?limit=200', { key: admin.key })).body.data;
    expect(audit.filter((e) => e.target === run.automation_id).map((e) => e.action).reverse()).toEqual(['automation.approve', 'automation.executed', 'automation.expired']);
    await waitFor(() => {
      const got = receiver.delivered().filter((r) => r.body.includes(`"workspace":"${org}"`)).map((r) => r.event.type);
      return Promise.resolve(events.every((e) => got.includes(e)) ? true : undefined);
    }, 30_000, 'every event at the webhook receiver');
  }, 240_000);
});
