import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { localGobgpServer } from '../../engines/gobgp';
import { freePort, type LocalProcess } from '../../engines/local-process';
import { createLogger } from '../../observability/logger';
import { loadConfig } from '../../service/config';
import { automationNames } from '../../streams/names';
import type { AuditEntryView, AutomationView, DataOf, ErrorBody, IncidentView, MitigationView, Page, ReplayView } from '../support/api-types';
import { birdc, birdFlowTable, birdFlowTable6, birdSocket, localBird } from '../../bench/bird';
import { automationWorkflowId } from '../../application/automation-runs';
import { recordHistory } from '../support/histories';
import { startTestOidcProvider, type TestOidcProvider } from '../support/oidc-provider';
import { startTestStack, type MintedTestKey, type TestStack } from '../support/test-stack';
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
  admin: MintedTestKey;
  operator: MintedTestKey;
  approver: MintedTestKey;
  /** An approver key of the operator's own person: the playbook's author, with another key. */
  authorApprover: MintedTestKey;
  prefixId: string;
}

describe('automation runs, announced by gobgpd to BIRD 2', () => {
  let dir: string;
  let gobgpd: LocalProcess;
  let bird: LocalProcess;
  let t: TestStack;
  let provider: TestOidcProvider;
  const sara = { subject: 'u-sara', name: 'Sara Author', email: 'sara@example.test', groups: ['sara-team'] };
  const table = (name: string) => birdc(birdSocket(path.join(dir, 'bird')), config.binPath, ['show', 'route', 'table', name, 'all']);
  const tableUntil = (name: string, check: (text: string) => boolean, what: string, timeoutMs = 20_000) =>
    waitFor(async () => ((await table(name).then(check)) ? true : undefined), timeoutMs, what);

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'automation-'));
    const [bgpPort, apiPort, birdPort] = await Promise.all([freePort(), freePort(), freePort()]);
    gobgpd = localGobgpServer({ dir: path.join(dir, 'gobgpd'), bgpPort, apiPort, asn, routerId: '127.0.0.1', binPath: config.binPath, toolsDir: config.toolsDir }, log);
    bird = localBird({ dir: path.join(dir, 'bird'), binPath: config.binPath, address: '127.0.0.2', port: birdPort, asn, speaker: { address: '127.0.0.1', port: bgpPort, asn }, discardNextHop }, log);
    await Promise.all([gobgpd.start(), bird.start()]);
    provider = await startTestOidcProvider({ users: [sara] });
    t = await startTestStack('chdb', {
      OIDC_ISSUER_URL: provider.issuer,
      OIDC_CLIENT_ID: provider.clientId,
      OIDC_AUDIENCE: provider.audience,
      ROLES: 'api,stream-workers,temporal-worker',
      BGP_SPEAKER_ADDRESS: `127.0.0.1:${apiPort}`,
      BGP_NEIGHBORS: `127.0.0.2:${birdPort}@${asn}`,
      BGP_BLACKHOLE_NEXT_HOP_V4: discardNextHop,
      BGP_ALLOWED_COMMUNITIES: '65010:1',
    });
    await waitFor(async () => ((await birdc(birdSocket(path.join(dir, 'bird')), config.binPath, ['show', 'protocols'])).includes('Established') ? true : undefined), 30_000, 'the BGP session');
  }, 120_000);

  afterAll(async () => {
    await t?.stop();
    await Promise.all([gobgpd?.stop(), bird?.stop(), provider?.stop()]);
    fs.rmSync(dir, { recursive: true, force: true });
  });

  /** A workspace whose admin declared `prefix` (approved by the platform admin: workspaces' prefixes never overlap) and whose operator wrote `playbooks`. */
  async function workspace(prefix: string, playbooks: unknown[], policy?: Record<string, unknown>): Promise<Workspace> {
    const admin = await t.mintKey({ role: 'admin' });
    const operator = await t.mintKey({ role: 'operator', orgId: admin.org_id });
    const approver = await t.mintKey({ role: 'approver', orgId: admin.org_id });
    const authorApprover = await t.mintKey({ role: 'approver', orgId: admin.org_id, owner: operator.owner });
    const declared = await t.request<{ id: string }>('POST', '/v1/prefixes', { key: admin.key, body: { prefix } });
    expect(declared.status).toBe(201);
    expect((await t.request('POST', `/v1/prefixes/${declared.body.id}/approve`, { key: t.adminKey })).status).toBe(200);
    if (policy) expect((await t.request('POST', '/v1/policies', { key: operator.key, body: policy })).status).toBe(201);
    expect((await t.request('PUT', '/v1/playbooks', { key: operator.key, body: { playbooks } })).status).toBe(200);
    return { admin, operator, approver, authorApprover, prefixId: declared.body.id };
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
    const w = await workspace('198.51.100.0/28', [{ id: 'rtbh', name: 'RTBH and NTP discard', match: { severities: [] }, actions: [blackhole, discardNtp] }], { name: 'a human decides', requires_approval: true, max_duration_minutes: 60 });
    const now = Date.now();
    const flows = [1, 2, 3].map((i) => ({ src_ip: `203.0.113.${i}`, dst_ip: '198.51.100.7', src_port: 123, dst_port: 4000 + i, protocol: 'udp', bytes: i * 1_000_000, packets: i * 1000, timestamp: now - 30_000 }));
    expect((await t.request('POST', '/flow', { key: w.operator.key, body: flows })).status).toBe(201);
    await waitForStoredCount(t.stack.clickhouse, 'flows', 3, { where: orgIs(w.admin.org_id), what: 'the flows stored' });

    const run = await runFor(w, '198.51.100.7', 'awaiting_approval');
    expect(run.actions.map((a) => [a.type, a.destination])).toEqual([['blackhole', '198.51.100.7/32'], ['flowspec_discard', '198.51.100.7/32']]);
    expect(run.actions[1]!.preview).toMatchObject({ matched_bits_per_second: Math.round((6_000_000 * 8) / 300), share: 1 });
    expect(run.actions[1]!.preview!.top_sources.map((s) => s.src_ip)).toEqual(['203.0.113.3', '203.0.113.2', '203.0.113.1']);
    expect(await table('master4')).not.toContain('198.51.100.7/32');

    // Four eyes between persons: the operator wrote the playbook version this run follows, and holds an approver key too.
    const own = await t.request<ErrorBody>('POST', `/v1/automations/${run.automation_id}/approve`, { key: w.authorApprover.key });
    expect([own.status, own.body.error.message]).toEqual([403, expect.stringContaining('person who wrote the playbook version') as unknown]);
    expect(run.requested_by_person).toEqual(w.operator.owner);
    expect((await t.request('POST', `/v1/automations/${run.automation_id}/approve`, { key: w.approver.key, body: { comment: 'preview checked' } })).status).toBe(202);
    await runIn(w, run.automation_id, 'active');
    await tableUntil('master4', (text) => text.includes('198.51.100.7/32') && text.includes('(65535,666)') && text.includes('(65010,1)'), 'the blackhole route in BIRD');
    await tableUntil(birdFlowTable, (text) => text.includes('198.51.100.7/32') && text.includes('sport 123'), 'the flowspec rule in BIRD');
    const mitigations = (await t.request<DataOf<MitigationView>>('GET', '/v1/mitigations', { key: w.operator.key })).body.data;
    expect(mitigations.map((m) => m.type).sort()).toEqual(['blackhole', 'flowspec_discard']);
    // The platform admin sees whose they are; another workspace sees none of them.
    const all = (await t.request<DataOf<MitigationView & { org_id: string }>>('GET', '/v1/mitigations/all', { key: t.adminKey })).body.data;
    expect(all.filter((m) => m.automation_id === run.automation_id).map((m) => m.org_id)).toEqual([w.admin.org_id, w.admin.org_id]);
    const stranger = await t.mintKey({ role: 'operator' });
    expect((await t.request<DataOf<MitigationView>>('GET', '/v1/mitigations', { key: stranger.key })).body.data).toEqual([]);
    expect((await t.request('GET', `/v1/automations/${run.automation_id}`, { key: stranger.key })).status).toBe(404);
    const strangerApprover = await t.mintKey({ role: 'approver', orgId: stranger.org_id });
    expect((await t.request('POST', `/v1/automations/${run.automation_id}/withdraw`, { key: strangerApprover.key })).status).toBe(404);

    // While a mitigation within it is announced, the workspace cannot give its prefix up.
    expect((await t.request('DELETE', `/v1/prefixes/${w.prefixId}`, { key: w.admin.key })).status).toBe(409);
    // An extension is a decision: not by the playbook's author (with any key), and within the policy's 60 minutes counted from the start.
    const extend = (key: string, minutes: number) => t.request<AutomationView & ErrorBody>('POST', `/v1/automations/${run.automation_id}/extend`, { key, body: { minutes } });
    expect((await extend(w.authorApprover.key, 10)).status).toBe(403);
    const tooLong = await extend(w.approver.key, 40);
    expect(tooLong.status).toBe(403);
    expect(tooLong.body.error.code).toBe('POLICY_DENIED');
    const before = Date.parse((await runIn(w, run.automation_id, 'active')).actions[0]!.ends_at!);
    const extended = await extend(w.approver.key, 20);
    expect(extended.status).toBe(200);
    expect(extended.body.actions.map((a) => Date.parse(a.ends_at!) - before)).toEqual([20 * 60_000, 20 * 60_000]);

    const withdrawn = await t.request<AutomationView>('POST', `/v1/automations/${run.automation_id}/withdraw`, { key: w.approver.key });
    expect(withdrawn.status).toBe(200);
    expect(withdrawn.body.status).toBe('withdrawn');
    await tableUntil('master4', (text) => !text.includes('198.51.100.7/32'), 'the blackhole route withdrawn');
    await tableUntil(birdFlowTable, (text) => !text.includes('198.51.100.7/32'), 'the flowspec rule withdrawn');
    expect((await runIn(w, run.automation_id, 'withdrawn')).actions.every((a) => a.withdrawn_at !== null)).toBe(true);
    const audit = (await t.request<Page<AuditEntryView>>('GET', '/v1/audit?limit=100', { key: w.admin.key })).body.data.filter((e) => e.target === run.automation_id);
    expect(audit.map((e) => e.action).reverse()).toEqual(['automation.decision_refused', 'automation.approve', 'automation.executed', 'automation.extend', 'automation.withdraw']);
    // Each decision and change names the approver's person beside the key; the run's own step names none.
    expect(audit.reverse().map((e) => e.actor_person)).toEqual([w.operator.owner, w.approver.owner, null, w.approver.owner, w.approver.owner]);
    // Counted once the ended state is recorded, just after its event is published: waited for, not assumed.
    const withdrawnRuns = async () => ((await t.stack.registry.getSingleMetric('nettel_automation_runs_total')?.get())?.values ?? []).find((v) => v.labels.outcome === 'withdrawn')?.value;
    expect(await waitFor(withdrawnRuns, 10_000, 'the withdrawn run counted')).toBeGreaterThanOrEqual(1);
    await recordHistory(t, 'automation-withdrawn', automationWorkflowId(w.admin.org_id, run.automation_id));
  });

  test('a playbook author signed in with single sign-on cannot extend a run of their own playbook with their bearer token; another person can', async () => {
    const admin = await t.mintKey({ role: 'admin' });
    const approver = await t.mintKey({ role: 'approver', orgId: admin.org_id });
    await t.request('PUT', '/v1/sso/group-mappings', { key: admin.key, body: { version: 0, mappings: [{ group: 'sara-team', roles: ['operator', 'approver'] }] } });
    const declared = await t.request<{ id: string }>('POST', '/v1/prefixes', { key: admin.key, body: { prefix: '198.51.100.96/28' } });
    expect((await t.request('POST', `/v1/prefixes/${declared.body.id}/approve`, { key: t.adminKey })).status).toBe(200);
    expect((await t.request('POST', '/v1/policies', { key: admin.key, body: { name: 'a human decides', requires_approval: true, max_duration_minutes: 60 } })).status).toBe(201);
    const bearer = { authorization: `Bearer ${(await provider.tokensFor(sara.subject)).access_token}` };
    const playbooks = [{ id: 'rtbh', name: 'RTBH', match: {}, actions: [blackhole] }];
    expect((await t.request('PUT', '/v1/playbooks', { headers: bearer, body: { playbooks } })).status).toBe(200);
    const w: Workspace = { admin, operator: admin, approver, authorApprover: approver, prefixId: declared.body.id };

    const run = await runFor(w, '198.51.100.98', 'awaiting_approval');
    expect(run.requested_by_person).toEqual({ subject: sara.subject, name: sara.name, email: sara.email });
    expect((await t.request('POST', `/v1/automations/${run.automation_id}/approve`, { key: approver.key })).status).toBe(202);
    await runIn(w, run.automation_id, 'active');
    const own = await t.request<ErrorBody>('POST', `/v1/automations/${run.automation_id}/extend`, { headers: bearer, body: { minutes: 10 } });
    expect([own.status, own.body.error.message]).toEqual([403, expect.stringContaining('person who wrote the playbook version') as unknown]);
    expect((await t.request('POST', `/v1/automations/${run.automation_id}/extend`, { key: approver.key, body: { minutes: 10 } })).status).toBe(200);
    expect((await t.request('POST', `/v1/automations/${run.automation_id}/withdraw`, { key: approver.key })).status).toBe(200);
  });

  test('a denied run never reaches BIRD', async () => {
    const w = await workspace('198.51.100.16/28', [{ id: 'rtbh', name: 'RTBH', match: {}, actions: [blackhole] }], { name: 'a human decides', requires_approval: true });
    const run = await runFor(w, '198.51.100.18', 'awaiting_approval');
    expect((await t.request('POST', `/v1/automations/${run.automation_id}/deny`, { key: w.approver.key })).status).toBe(202);
    expect((await runIn(w, run.automation_id, 'denied')).actions.every((a) => a.starts_at === null)).toBe(true);
    expect(await table('master4')).not.toContain('198.51.100.18/32');
    await recordHistory(t, 'automation-denied', automationWorkflowId(w.admin.org_id, run.automation_id));
  });

  test('a destination outside the workspace approved prefixes is denied by policy and never announced', async () => {
    const w = await workspace('198.51.100.32/28', [{ id: 'rtbh', name: 'RTBH', match: {}, actions: [blackhole] }]);
    const run = await runFor(w, '203.0.113.50', 'denied');
    expect(run.error?.message).toContain("outside the workspace's approved prefixes");
    expect(await table('master4')).not.toContain('203.0.113.50/32');
  });

  test('a SYN-flood rule on an IPv6 destination previews the TCP flows with SYN set, reaches BIRD’s flow6 table with its TCP flags, and leaves on withdrawal', async () => {
    const synFlood = { type: 'flowspec_rate_limit', duration_minutes: 30, rate_bytes_per_second: 125_000, destination_ports: [443], tcp_flags: ['syn'] };
    const w = await workspace('2001:db8:77::/48', [{ id: 'syn', name: 'SYN flood', match: {}, actions: [synFlood] }]);
    const now = Date.now();
    const flow = (protocol: string, bytes: number, tcpFlags: number) => ({ src_ip: '2001:db8:99::1', dst_ip: '2001:db8:77::7', src_port: 40_000, dst_port: 443, protocol, bytes, packets: 100, tcp_flags: tcpFlags, timestamp: now - 30_000 });
    const [syn, ack] = [0x02, 0x10];
    expect((await t.request('POST', '/flow', { key: w.operator.key, body: [flow('tcp', 3_000_000, syn), flow('tcp', 1_000_000, ack), flow('udp', 1_000_000, 0)] })).status).toBe(201);
    await waitForStoredCount(t.stack.clickhouse, 'flows', 3, { where: orgIs(w.admin.org_id), what: 'the flows stored' });

    const announced = await runFor(w, '2001:db8:77::7', 'active');
    // No policy held it: its preview comes once it is announced, off the announcement's path.
    const run = await waitFor(async () => {
      const r = (await t.request<AutomationView>('GET', `/v1/automations/${announced.automation_id}`, { key: w.operator.key })).body;
      return r.actions[0]?.preview ? r : undefined;
    }, 30_000, 'the preview of a run that announced at once');
    // The SYN flow matches, the ACK-only one does not; a flow of 100 packets ORs their flags, so the preview says it is approximate.
    expect(run.actions[0]).toMatchObject({ destination: '2001:db8:77::7/128', preview: { approximate: true, share: 0.6, matched_bits_per_second: Math.round((3_000_000 * 8) / 300) } });
    await tableUntil(birdFlowTable6, (text) => /flow6 \{ dst 2001:db8:77::7\/128; dport 443; tcp flags 0x2\/0x2; \}/.test(text), 'the IPv6 flowspec rule in BIRD');
    expect((await t.request('POST', `/v1/automations/${run.automation_id}/withdraw`, { key: w.approver.key })).status).toBe(200);
    await tableUntil(birdFlowTable6, (text) => !text.includes('2001:db8:77::7/128'), 'the IPv6 flowspec rule withdrawn');
  });

  test("a fingerprint action announces the narrowest rule that covers the stored attack and not the destination's normal traffic, and BIRD holds it until its withdrawal", async () => {
    const w = await workspace('198.51.100.128/28', [{ id: 'fp', name: 'Fingerprint', match: {}, actions: [{ type: 'flowspec_fingerprint', duration_minutes: 30 }] }]);
    // Normal HTTPS traffic 20 minutes ago (1,000-byte packets), then a SYN flood on port 80 from 40 sources 30 s ago.
    const [now, address] = [Date.now(), '198.51.100.129'];
    const normal = Array.from({ length: 10 }, (_, i) => ({ src_ip: `192.0.2.${i + 1}`, dst_ip: address, src_port: 50_000 + i, dst_port: 443, protocol: 'tcp', bytes: 100_000, packets: 100, tcp_flags: 0x18, timestamp: now - 20 * 60_000 }));
    const flood = Array.from({ length: 40 }, (_, i) => ({ src_ip: `203.0.113.${i + 1}`, dst_ip: address, src_port: 40_000 + i, dst_port: 80, protocol: 'tcp', bytes: 60, packets: 1, tcp_flags: 0x02, timestamp: now - 30_000 }));
    expect((await t.request('POST', '/flow', { key: w.operator.key, body: [...normal, ...flood] })).status).toBe(201);
    await waitForStoredCount(t.stack.clickhouse, 'flows', 50, { where: orgIs(w.admin.org_id), what: 'the flows stored' });
    const announced = await runFor(w, address, 'active');
    expect(announced.actions[0]).toMatchObject({
      type: 'flowspec_discard',
      destination: '198.51.100.129/32',
      fingerprint: { attack_share: 1, baseline_share: 0, rule: { protocols: [6], destination_ports: [80], source_ports: [], tcp_flags: ['syn'], packet_length: { min: 60, max: 60 } } },
    });
    await tableUntil(birdFlowTable, (text) => /flow4 \{ dst 198\.51\.100\.129\/32; proto 6; dport 80; tcp flags 0x2\/0x2; length 60\.\.60; \}/.test(text), 'the fingerprint rule in BIRD');
    await waitFor(async () => (await t.request<AutomationView>('GET', `/v1/automations/${announced.automation_id}`, { key: w.operator.key })).body.actions[0]?.preview ?? undefined, 30_000, 'the preview (a withdraw sent during it answered 503 now and then: docs/mitigations.md)');
    expect((await t.request('POST', `/v1/automations/${announced.automation_id}/withdraw`, { key: w.approver.key })).status).toBe(200);
    await tableUntil(birdFlowTable, (text) => !text.includes('198.51.100.129/32'), 'the fingerprint rule withdrawn');
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
      JSON.stringify({ type: 'incident.acknowledged', workspace: w.admin.org_id, data: { id: 'inc_00000000000000000000' } }),
      JSON.stringify({ type: 'incident.opened', workspace: w.admin.org_id, data: { id: "inc_'; DROP TABLE x" } }),
    ];
    for (const body of forged) await t.stack.nats.js().publish(subject, body);
    await waitFor(async () => ((await refused()) - before === forged.length ? true : undefined), 10_000, 'the forged triggers refused');
    expect((await t.request<Page<AutomationView>>('GET', '/v1/automations', { key: w.operator.key })).body.data).toEqual([]);
  });

  test('a replay of the incident reports what the playbook in force would do, previewed on the replay window', async () => {
    const w = await workspace('198.51.100.80/28', [{ id: 'ntp', name: 'NTP discard', match: {}, actions: [discardNtp] }]);
    const flows = [1, 2].map((i) => ({ src_ip: `203.0.113.${10 + i}`, dst_ip: '198.51.100.82', src_port: 123, dst_port: 5000, protocol: 'udp', bytes: i * 500_000, packets: i * 100, timestamp: Date.now() - 20_000 }));
    expect((await t.request('POST', '/flow', { key: w.operator.key, body: flows })).status).toBe(201);
    await waitForStoredCount(t.stack.clickhouse, 'flows', 2, { where: orgIs(w.admin.org_id), what: 'the flows stored' });
    const run = await runFor(w, '198.51.100.82', 'active');
    const requested = await t.request<{ replay_id: string }>('POST', '/v1/replay', { key: w.operator.key, body: { incident_id: run.incident_id, window_minutes: 10 } });
    expect(requested.status).toBe(202);
    const replay = await waitFor(async () => {
      const r = (await t.request<ReplayView>('GET', `/v1/replays/${requested.body.replay_id}`, { key: w.operator.key })).body;
      return r.status === 'completed' ? r : undefined;
    }, 30_000, 'the replay');
    const [playbook] = replay.report!.automation.playbooks;
    expect(playbook).toMatchObject({ playbook_id: 'ntp', refused: null, actions: [{ type: 'flowspec_discard', destination: '198.51.100.82/32', duration_minutes: 30 }] });
    expect(playbook!.actions[0]!.preview).toMatchObject({ window_minutes: 10, share: 1 });
    expect(playbook!.actions[0]!.preview!.top_sources.map((s) => s.src_ip)).toEqual(['203.0.113.12', '203.0.113.11']);
    expect((await t.request('POST', `/v1/automations/${run.automation_id}/withdraw`, { key: w.approver.key })).status).toBe(200);
  });

  test('a mitigation no policy holds back is announced at once and leaves BIRD at the end of its duration', async () => {
    const w = await workspace('198.51.100.64/28', [{ id: 'short', name: 'one minute', match: {}, actions: [{ ...blackhole, duration_minutes: 1 }] }]);
    const run = await runFor(w, '198.51.100.66', 'active');
    await tableUntil('master4', (text) => text.includes('198.51.100.66/32'), 'the blackhole route in BIRD');
    const endsAt = Date.parse(run.actions[0]!.ends_at!);
    await tableUntil('master4', (text) => !text.includes('198.51.100.66/32'), 'the route gone at its end', 90_000);
    expect(Date.now()).toBeGreaterThanOrEqual(endsAt);
    await runIn(w, run.automation_id, 'completed');
    await recordHistory(t, 'automation-completed', automationWorkflowId(w.admin.org_id, run.automation_id));
  }, 120_000);
});
