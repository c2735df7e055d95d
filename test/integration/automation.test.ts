import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { localGobgpServer } from '../../engines/gobgp';
import { freePort, type LocalProcess } from '../../engines/local-process';
import { createLogger } from '../../observability/logger';
import { loadConfig } from '../../service/config';
import { automationNames } from '../../streams/names';
import type { AuditEntryView, AutomationView, DataOf, IncidentView, MitigationView, Page } from '../support/api-types';
import { birdc, birdFlowTable, birdSocket, localBird } from '../../bench/bird';
import { startTestStack, type TestStack } from '../support/test-stack';
import { orgIs, waitForStoredCount } from '../support/stored-count';
import { waitFor } from '../support/wait';

/**
 * Automation end to end on real peers: an incident opens from a signal, the
 * workspace's playbook starts a run (Temporal), the policies hold it for an
 * approver, and on approval the service's mitigation ledger makes a real
 * gobgpd announce a blackhole route and a flowspec rule to BIRD 2 over
 * loopback; a withdrawal or the end of the duration takes them out again.
 */
const log = createLogger(process.env.TEST_LOGS ? 'info' : 'silent');
const config = loadConfig(process.env);
const asn = 65001;
const discardNextHop = '192.0.2.1';

interface Workspace {
  admin: { key: string; key_id: string; org_id: string };
  operator: { key: string; key_id: string };
  approver: { key: string; key_id: string };
}

describe('automation runs, announced by gobgpd to BIRD 2', () => {
  let dir: string;
  let gobgpd: LocalProcess;
  let bird: LocalProcess;
  let t: TestStack;
  const table = (name: string) => birdc(birdSocket(path.join(dir, 'bird')), config.binPath, ['show', 'route', 'table', name, 'all']);
  const tableUntil = (name: string, check: (text: string) => boolean, what: string, timeoutMs = 20_000) =>
    waitFor(async () => ((await table(name).then(check)) ? true : undefined), timeoutMs, what);

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'automation-'));
    const [bgpPort, apiPort, birdPort] = await Promise.all([freePort(), freePort(), freePort()]);
    gobgpd = localGobgpServer({ dir: path.join(dir, 'gobgpd'), bgpPort, apiPort, asn, routerId: '127.0.0.1', binPath: config.binPath, toolsDir: config.toolsDir }, log);
    bird = localBird({ dir: path.join(dir, 'bird'), binPath: config.binPath, address: '127.0.0.2', port: birdPort, asn, speaker: { address: '127.0.0.1', port: bgpPort, asn }, discardNextHop }, log);
    await Promise.all([gobgpd.start(), bird.start()]);
    t = await startTestStack('chdb', {
      ROLES: 'api,stream-workers,temporal-worker',
      BGP_SPEAKER_ADDRESS: `127.0.0.1:${apiPort}`,
      BGP_NEIGHBORS: `127.0.0.2:${birdPort}@${asn}`,
      BGP_BLACKHOLE_NEXT_HOP_V4: discardNextHop,
    });
    await waitFor(async () => ((await birdc(birdSocket(path.join(dir, 'bird')), config.binPath, ['show', 'protocols'])).includes('Established') ? true : undefined), 30_000, 'the BGP session');
  }, 120_000);

  afterAll(async () => {
    await t?.stop();
    await Promise.all([gobgpd?.stop(), bird?.stop()]);
    fs.rmSync(dir, { recursive: true, force: true });
  });

  /** A workspace whose admin declared `prefix` (approved by the platform admin: workspaces' prefixes never overlap) and whose operator wrote `playbooks`. */
  async function workspace(prefix: string, playbooks: unknown[], policy?: Record<string, unknown>): Promise<Workspace> {
    const admin = await t.mintKey({ role: 'admin' });
    const operator = await t.mintKey({ role: 'operator', orgId: admin.org_id });
    const approver = await t.mintKey({ role: 'approver', orgId: admin.org_id });
    const declared = await t.request<{ id: string }>('POST', '/v1/prefixes', { key: admin.key, body: { prefix } });
    expect(declared.status).toBe(201);
    expect((await t.request('POST', `/v1/prefixes/${declared.body.id}/approve`, { key: t.adminKey })).status).toBe(200);
    if (policy) expect((await t.request('POST', '/v1/policies', { key: operator.key, body: policy })).status).toBe(201);
    expect((await t.request('PUT', '/v1/playbooks', { key: operator.key, body: { playbooks } })).status).toBe(200);
    return { admin, operator, approver };
  }

  /** An incident on `service` from one BGP signal, and the automation run the playbook started for it. */
  async function runFor(w: Workspace, service: string, status: AutomationView['status']): Promise<AutomationView> {
    expect((await t.request('POST', '/ingest', { key: w.operator.key, body: { telemetry: 'bgp', service, environment: 'prod', region: 'r1', asn: 64500, latency_ms: 40 } })).status).toBe(202);
    const incident = await waitFor(async () => (await t.request<Page<IncidentView>>('GET', `/v1/incidents?service=${service}`, { key: w.operator.key })).body.data[0], 20_000, 'the incident');
    return waitFor(async () => {
      const run = (await t.request<Page<AutomationView>>('GET', `/v1/automations?incident_id=${incident.id}`, { key: w.operator.key })).body.data[0];
      return run?.status === status ? run : undefined;
    }, 30_000, `the automation run ${status}`);
  }

  const runIn = (w: Workspace, id: string, status: AutomationView['status']) =>
    waitFor(async () => {
      const run = (await t.request<AutomationView>('GET', `/v1/automations/${id}`, { key: w.operator.key })).body;
      return run.status === status ? run : undefined;
    }, 30_000, `the automation run ${status}`);

  const blackhole = { type: 'blackhole', duration_minutes: 30, communities: ['65010:1'] };
  const discardNtp = { type: 'flowspec_discard', duration_minutes: 30, protocols: ['udp'], source_ports: [123] };

  test('a run waits for an approver with a preview of the stored flows, then announces; a withdrawal takes its routes out of BIRD', async () => {
    const w = await workspace('198.51.100.0/28', [{ id: 'rtbh', name: 'RTBH and NTP discard', match: { severities: [] }, actions: [blackhole, discardNtp] }], { name: 'a human decides', requires_approval: true });
    const now = Date.now();
    const flows = [1, 2, 3].map((i) => ({ src_ip: `203.0.113.${i}`, dst_ip: '198.51.100.7', src_port: 123, dst_port: 4000 + i, protocol: 'udp', bytes: i * 1_000_000, packets: i * 1000, timestamp: now - 30_000 }));
    expect((await t.request('POST', '/flow', { key: w.operator.key, body: flows })).status).toBe(201);
    await waitForStoredCount(t.stack.clickhouse, 'flows', 3, { where: orgIs(w.admin.org_id), what: 'the flows stored' });

    const run = await runFor(w, '198.51.100.7', 'awaiting_approval');
    expect(run.actions.map((a) => [a.type, a.destination])).toEqual([['blackhole', '198.51.100.7/32'], ['flowspec_discard', '198.51.100.7/32']]);
    expect(run.actions[1]!.preview).toMatchObject({ matched_bits_per_second: Math.round((6_000_000 * 8) / 300), share: 1 });
    expect(run.actions[1]!.preview!.top_sources.map((s) => s.src_ip)).toEqual(['203.0.113.3', '203.0.113.2', '203.0.113.1']);
    expect(await table('master4')).not.toContain('198.51.100.7/32');

    // Four eyes: the operator wrote the playbook version this run follows.
    expect((await t.request('POST', `/v1/automations/${run.automation_id}/approve`, { key: w.operator.key })).status).toBe(403);
    expect((await t.request('POST', `/v1/automations/${run.automation_id}/approve`, { key: w.approver.key, body: { comment: 'preview checked' } })).status).toBe(202);
    await runIn(w, run.automation_id, 'active');
    await tableUntil('master4', (text) => text.includes('198.51.100.7/32') && text.includes('(65535,666)') && text.includes('(65010,1)'), 'the blackhole route in BIRD');
    await tableUntil(birdFlowTable, (text) => text.includes('198.51.100.7/32') && text.includes('sport 123'), 'the flowspec rule in BIRD');
    const mitigations = (await t.request<DataOf<MitigationView>>('GET', '/v1/mitigations', { key: w.operator.key })).body.data;
    expect(mitigations.map((m) => m.type).sort()).toEqual(['blackhole', 'flowspec_discard']);

    const withdrawn = await t.request<AutomationView>('POST', `/v1/automations/${run.automation_id}/withdraw`, { key: w.approver.key });
    expect(withdrawn.status).toBe(200);
    await tableUntil('master4', (text) => !text.includes('198.51.100.7/32'), 'the blackhole route withdrawn');
    await tableUntil(birdFlowTable, (text) => !text.includes('198.51.100.7/32'), 'the flowspec rule withdrawn');
    expect((await runIn(w, run.automation_id, 'withdrawn')).actions.every((a) => a.withdrawn_at !== null)).toBe(true);
    const audit = (await t.request<Page<AuditEntryView>>('GET', '/v1/audit?limit=100', { key: w.admin.key })).body.data.filter((e) => e.target === run.automation_id);
    expect(audit.map((e) => e.action).reverse()).toEqual(['automation.decision_refused', 'automation.approve', 'automation.executed', 'automation.withdraw']);
  });

  test('a denied run never reaches BIRD', async () => {
    const w = await workspace('198.51.100.16/28', [{ id: 'rtbh', name: 'RTBH', match: {}, actions: [blackhole] }], { name: 'a human decides', requires_approval: true });
    const run = await runFor(w, '198.51.100.18', 'awaiting_approval');
    expect((await t.request('POST', `/v1/automations/${run.automation_id}/deny`, { key: w.approver.key })).status).toBe(202);
    expect((await runIn(w, run.automation_id, 'denied')).actions.every((a) => a.starts_at === null)).toBe(true);
    expect(await table('master4')).not.toContain('198.51.100.18/32');
  });

  test('a destination outside the workspace approved prefixes is denied by policy and never announced', async () => {
    const w = await workspace('198.51.100.32/28', [{ id: 'rtbh', name: 'RTBH', match: {}, actions: [blackhole] }]);
    const run = await runFor(w, '203.0.113.50', 'denied');
    expect(run.error?.message).toContain("outside the workspace's approved prefixes");
    expect(await table('master4')).not.toContain('203.0.113.50/32');
  });

  test('a trigger that is not an incident event of the workspace its subject names starts nothing, and is counted as refused', async () => {
    const w = await workspace('198.51.100.48/28', [{ id: 'rtbh', name: 'RTBH', match: {}, actions: [blackhole] }]);
    const other = await t.mintKey({ role: 'operator' });
    const refused = async () => {
      const metric = t.stack.registry.getSingleMetric('nettel_automation_triggers_total');
      return metric ? (await metric.get()).values.filter((v) => v.labels.outcome === 'refused').reduce((n, v) => n + v.value, 0) : 0;
    };
    const before = await refused();
    const subject = automationNames(t.stack.config.nats.prefix).triggerSubject(w.admin.org_id);
    const forged = [
      'not json',
      JSON.stringify({ type: 'incident.opened', workspace: other.org_id, data: { id: 'inc_00000000000000000000' } }),
      JSON.stringify({ type: 'incident.resolved', workspace: w.admin.org_id, data: { id: 'inc_00000000000000000000' } }),
      JSON.stringify({ type: 'incident.opened', workspace: w.admin.org_id, data: { id: "inc_'; DROP TABLE x" } }),
    ];
    for (const body of forged) await t.stack.nats.js().publish(subject, body);
    await waitFor(async () => ((await refused()) - before === forged.length ? true : undefined), 10_000, 'the forged triggers refused');
    expect((await t.request<Page<AutomationView>>('GET', '/v1/automations', { key: w.operator.key })).body.data).toEqual([]);
  });

  test('a mitigation no policy holds back is announced at once and leaves BIRD at the end of its duration', async () => {
    const w = await workspace('198.51.100.64/28', [{ id: 'short', name: 'one minute', match: {}, actions: [{ ...blackhole, duration_minutes: 1 }] }]);
    const run = await runFor(w, '198.51.100.66', 'active');
    await tableUntil('master4', (text) => text.includes('198.51.100.66/32'), 'the blackhole route in BIRD');
    const endsAt = Date.parse(run.actions[0]!.ends_at!);
    await tableUntil('master4', (text) => !text.includes('198.51.100.66/32'), 'the route gone at its end', 90_000);
    expect(Date.now()).toBeGreaterThanOrEqual(endsAt);
    await runIn(w, run.automation_id, 'completed');
  }, 120_000);
});
