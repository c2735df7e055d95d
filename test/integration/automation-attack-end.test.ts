import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createLogger } from '../../observability/logger';
import { automationNames } from '../../streams/names';
import type { AuditEntryView, AutomationView, ErrorBody, IncidentView, Page } from '../support/api-types';
import { startBgpRouter, type BgpRouter } from '../support/cluster/bgp-router';
import { synFlood } from '../support/detection-flows';
import { startTestStack, type TestStack } from '../support/test-stack';
import { waitFor, waitForDetectionDrained, waitForTelemetryDrained } from '../support/wait';

/**
 * A mitigation held until the attack ends: a rate incident's run announces a
 * blackhole through gobgpd to BIRD, and withdraws it when the incident
 * resolves after its quiet time, long before the action's duration.
 */
describe('a mitigation held until its attack ends', () => {
  let dir: string;
  let router: BgpRouter;
  let t: TestStack;
  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'attack-end-'));
    router = await startBgpRouter(dir, createLogger('warn', 'bgp'));
    t = await startTestStack('chdb', { ROLES: 'api,stream-workers,temporal-worker', WORKER_MAX_WAIT_MS: '20', BGP_BLACKHOLE_NEXT_HOP_V4: '192.0.2.1', ...router.speakerEnv });
  }, 120_000);
  afterAll(async () => {
    await t?.stop();
    await router?.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  /** Ordinary traffic to 50 other destinations, under every threshold: it moves event time on. */
  const background = (start: number, seconds: number) =>
    Array.from({ length: seconds * 100 }, (_, i) => ({ timestamp: start + i * 10, src_ip: `192.0.2.${(i % 200) + 1}`, dst_ip: `203.0.113.${(i % 50) + 100}`, src_port: 443, dst_port: 30_000 + i, protocol: 'tcp', tcp_flags: 0x18, packets: 5, bytes: 5_000 }));
  async function post(key: string, flows: object[]) {
    for (let i = 0; i < flows.length; i += 500) expect((await t.request<ErrorBody>('POST', '/flow', { key, body: flows.slice(i, i + 500) })).status).toBe(201);
    await waitForTelemetryDrained(t.stack.nats.jsm, t.stack.config.nats.prefix);
    await waitForDetectionDrained(t.stack.nats.jsm, t.stack.config.nats.prefix);
  }

  test('the blackhole leaves BIRD when the incident resolves after its quiet time, audited as the attack ended, before its duration', async () => {
    const admin = await t.mintKey({ role: 'admin' });
    const declared = await t.request<{ id: string }>('POST', '/v1/prefixes', { key: admin.key, body: { prefix: '203.0.113.0/24' } });
    expect((await t.request('POST', `/v1/prefixes/${declared.body.id}/approve`, { key: t.adminKey })).status).toBe(200);
    expect((await t.request('PUT', '/v1/detection-rules', { key: admin.key, body: { rates: { thresholds: { total: { pps: 3_000 } }, quiet_seconds: 10 } } })).status).toBe(200);
    const held = { type: 'blackhole', duration_minutes: 60, until_attack_ends: true };
    expect((await t.request('PUT', '/v1/playbooks', { key: admin.key, body: { playbooks: [{ id: 'held', name: 'held', match: {}, actions: [held] }] } })).status).toBe(200);

    const start = Date.now() - 60_000;
    await post(admin.key, synFlood('203.0.113.9', start, 12));
    const run = await waitFor(async () => (await t.request<Page<AutomationView>>('GET', '/v1/automations', { key: admin.key })).body.data.find((r) => r.status === 'active'), 30_000, 'the run active');
    await waitFor(async () => ((await router.holds('203.0.113.9/32')) ? true : undefined), 20_000, 'the blackhole in BIRD');
    // A forged incident.resolved trigger of the still open incident is refused: the stored incident decides.
    const refused = async () => {
      const metric = t.stack.registry.getSingleMetric('nettel_automation_triggers_total');
      return metric ? (await metric.get()).values.filter((v) => v.labels.outcome === 'refused').reduce((n, v) => n + v.value, 0) : 0;
    };
    const before = await refused();
    const forged = { type: 'incident.resolved', workspace: admin.org_id, data: { id: run.incident_id } };
    await t.stack.nats.js().publish(automationNames(t.stack.config.nats.prefix).triggerSubject(admin.org_id), JSON.stringify(forged));
    await waitFor(async () => ((await refused()) > before ? true : undefined), 30_000, 'the forged trigger refused');
    expect(await router.holds('203.0.113.9/32')).toBe(true);

    // The flood stopped: 30 s of background traffic pass its quiet time in event time.
    await post(admin.key, background(start + 12_000, 30));
    await waitFor(async () => (await t.request<Page<IncidentView>>('GET', '/v1/incidents', { key: admin.key })).body.data.find((i) => i.state === 'resolved'), 30_000, 'the incident resolved');
    await waitFor(async () => ((await router.holds('203.0.113.9/32')) ? undefined : true), 30_000, 'the blackhole withdrawn');
    const ended = await waitFor(async () => {
      const r = (await t.request<AutomationView>('GET', `/v1/automations/${run.automation_id}`, { key: admin.key })).body;
      return r.status === 'completed' ? r : undefined;
    }, 30_000, 'the run completed');
    expect(Date.parse(ended.actions[0]!.withdrawn_at!)).toBeLessThan(Date.parse(ended.actions[0]!.ends_at!));
    const audit = (await t.request<Page<AuditEntryView>>('GET', '/v1/audit?limit=200', { key: admin.key })).body.data;
    expect(audit.filter((e) => e.target === run.automation_id).map((e) => e.action)).toContain('automation.attack_ended');
  });

  test("a fingerprint's Flowspec rule reaches BIRD after approval and is withdrawn once the attack stops and its quiet time passes", async () => {
    const admin = await t.mintKey({ role: 'admin' });
    const approver = await t.mintKey({ role: 'approver', orgId: admin.org_id });
    const declared = await t.request<{ id: string }>('POST', '/v1/prefixes', { key: admin.key, body: { prefix: '198.18.0.0/24' } });
    expect((await t.request('POST', `/v1/prefixes/${declared.body.id}/approve`, { key: t.adminKey })).status).toBe(200);
    expect((await t.request('PUT', '/v1/detection-rules', { key: admin.key, body: { rates: { thresholds: { total: { pps: 3_000 } }, quiet_seconds: 10 } } })).status).toBe(200);
    expect((await t.request('POST', '/v1/policies', { key: admin.key, body: { name: 'a person approves', requires_approval: true } })).status).toBe(201);
    const fingerprint = { type: 'flowspec_fingerprint', duration_minutes: 60, until_attack_ends: true };
    expect((await t.request('PUT', '/v1/playbooks', { key: admin.key, body: { playbooks: [{ id: 'fp', name: 'fingerprint', match: {}, actions: [fingerprint] }] } })).status).toBe(200);

    const start = Date.now() - 60_000;
    await post(admin.key, synFlood('198.18.0.9', start, 12));
    const waiting = await waitFor(async () => (await t.request<Page<AutomationView>>('GET', '/v1/automations', { key: admin.key })).body.data.find((r) => r.status === 'awaiting_approval'), 30_000, 'the run awaiting approval');
    expect((await t.request('POST', `/v1/automations/${waiting.automation_id}/approve`, { key: approver.key, body: {} })).status).toBe(202);
    const rule = /flow4 \{ dst 198\.18\.0\.9\/32; proto 6; dport 80; tcp flags 0x2\/0x2; length 60\.\.60; \}/;
    await waitFor(async () => (rule.test(await router.flowRules()) ? true : undefined), 30_000, 'the fingerprint rule in BIRD');

    await post(admin.key, background(start + 12_000, 30));
    await waitFor(async () => (rule.test(await router.flowRules()) ? undefined : true), 30_000, 'the fingerprint rule withdrawn');
    const ended = (await t.request<AutomationView>('GET', `/v1/automations/${waiting.automation_id}`, { key: admin.key })).body;
    expect(ended.actions[0]).toMatchObject({ type: 'flowspec_discard', fingerprint: { attack_share: 1 } });
    const audit = (await t.request<Page<AuditEntryView>>('GET', '/v1/audit?limit=200', { key: admin.key })).body.data;
    expect(audit.filter((e) => e.target === waiting.automation_id).map((e) => e.action)).toEqual(expect.arrayContaining(['automation.approve', 'automation.executed', 'automation.attack_ended']));
  });
});
