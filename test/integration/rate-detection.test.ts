import type { AuditEntryView, ErrorBody, IncidentView, Page } from '../support/api-types';
import { startTestStack, transports, type TestStack } from '../support/test-stack';
import { waitFor, waitForDetectionDrained, waitForTelemetryDrained } from '../support/wait';
import { WebhookReceiver } from '../support/webhook-receiver';
import { attackers, synFlood } from '../support/detection-flows';

interface Attack {
  type: string;
  peak: { pps: number };
  current: { pps: number };
  top_sources: Array<{ address: string; packets: number }>;
  top_destination_ports: Array<{ port: number }>;
  protocols: Array<{ class: string }>;
  packet_sizes: Array<{ min: number }>;
}
type IncidentWithAttack = IncidentView & { attack: Attack | null };

/** Ordinary traffic: 50 destinations (203.0.113.100-149, none the flood's), a few packets each, well under every threshold. */
function background(start: number, seconds: number) {
  return Array.from({ length: seconds * 100 }, (_, i) => ({
    timestamp: start + i * 10,
    src_ip: `192.0.2.${(i % 200) + 1}`,
    dst_ip: `203.0.113.${(i % 50) + 100}`,
    src_port: 443,
    dst_port: 30_000 + (i % 1000),
    protocol: 'tcp',
    tcp_flags: 0x18,
    packets: 5,
    bytes: 5_000,
  }));
}

/** Rate rules under which the flood crosses (3,000 packets a second to one destination) and the background does not. */
const rates = { thresholds: { total: { pps: 3_000 } } };

describe.each(transports)('rate detection from flows posted over HTTP on %s', (transport) => {
  let t: TestStack;
  const receiver = new WebhookReceiver();
  beforeAll(async () => {
    t = await startTestStack(transport, { ROLES: 'api,stream-workers', WORKER_MAX_WAIT_MS: '20', WEBHOOK_ALLOWED_HOSTS: '127.0.0.1' });
    await receiver.start();
  });
  afterAll(async () => {
    await receiver.stop();
    await t.stop();
  });

  async function workspace(extraRates: object = {}) {
    const { key } = await t.mintKey({ role: 'operator' });
    expect((await t.request('PUT', '/v1/detection-rules', { key, body: { rates: { ...rates, ...extraRates } } })).status).toBe(200);
    return key;
  }
  async function post(key: string, flows: object[]) {
    for (let i = 0; i < flows.length; i += 500) {
      const answer = await t.request<ErrorBody>('POST', '/flow', { key, body: flows.slice(i, i + 500) });
      expect(answer.status).toBe(201);
    }
  }
  const drained = async () => {
    await waitForTelemetryDrained(t.stack.nats.jsm, t.stack.config.nats.prefix);
    await waitForDetectionDrained(t.stack.nats.jsm, t.stack.config.nats.prefix);
  };
  const incidents = async (key: string) => (await t.request<Page<IncidentView>>('GET', '/v1/incidents?limit=100', { key })).body.data;
  const incident = async (key: string, id: string) => (await t.request<IncidentWithAttack>('GET', `/v1/incidents/${id}`, { key })).body;

  test('a SYN flood opens one incident of type syn_flood, whose attack names its top sources', async () => {
    const key = await workspace();
    const start = Date.now() - 60_000;
    await post(key, [...background(start, 12), ...synFlood('203.0.113.9', start, 12)]);
    await drained();
    const opened = await waitFor(async () => ((await incidents(key)).length > 0 ? incidents(key) : undefined), 30_000, 'an incident');
    expect(opened.map((i) => [i.service, i.environment, i.region])).toEqual([['203.0.113.9', 'network', 'global']]);
    expect(opened[0]!.rule).toBe('rate.v2:host');
    const { attack } = await incident(key, opened[0]!.id);
    expect(attack?.type).toBe('syn_flood');
    expect(attack?.top_sources.map((s) => s.address)).toEqual([...attackers].reverse());
    expect(attack?.top_destination_ports.map((p) => p.port)).toEqual([80]);
    expect(attack?.peak.pps).toBeGreaterThanOrEqual(3_000);
  });

  test("the incident.opened event of a flood comes as its first window's running sums cross, before the window closes: rate.v2:host, no attack yet", async () => {
    const key = await workspace();
    const org = (await t.request<{ org_id: string }>('GET', '/v1/whoami', { key })).body.org_id;
    expect((await t.request('POST', '/v1/webhooks', { key, body: { url: receiver.url(`/${org}`), events: ['incident.opened'] } })).status).toBe(201);
    // One message of 5 s of the flood: its windows cross before any closes (the newest flow is within the lateness of the first).
    await post(key, synFlood('203.0.113.9', Date.now() - 60_000, 5));
    await drained();
    const opened = await waitFor(() => Promise.resolve(receiver.delivered().find((r) => r.path === `/${org}` && r.event.type === 'incident.opened')), 30_000, 'incident.opened');
    expect([opened.event.data.rule, 'attack' in opened.event.data]).toEqual(['rate.v2:host', false]);
  });

  test('a flood that stops resolves its incident after the quiet time, by the rate detector, audited and announced as incident.resolved with its attack', async () => {
    const key = await workspace({ quiet_seconds: 10 });
    const org = (await t.request<{ org_id: string }>('GET', '/v1/whoami', { key })).body.org_id;
    expect((await t.request('POST', '/v1/webhooks', { key, body: { url: receiver.url(`/${org}/quiet`), events: ['incident.resolved'] } })).status).toBe(201);
    const start = Date.now() - 60_000;
    // The flood for 12 s of event time, then 30 s of background traffic: the quiet time passes in event time.
    await post(key, [...synFlood('203.0.113.9', start, 12), ...background(start + 12_000, 30)]);
    await drained();
    const resolved = await waitFor(async () => (await incidents(key)).find((i) => i.state === 'resolved'), 30_000, 'the incident resolved');
    expect(resolved.service).toBe('203.0.113.9');
    const admin = await t.mintKey({ role: 'admin', orgId: org });
    const audit = (await t.request<Page<AuditEntryView>>('GET', '/v1/audit?limit=100', { key: admin.key })).body.data;
    expect(audit.filter((e) => e.action === 'incident.resolve').map((e) => [e.actor, e.target])).toEqual([['rate-detector', resolved.id]]);
    const event = await waitFor(() => Promise.resolve(receiver.delivered().find((r) => r.path === `/${org}/quiet` && r.event.type === 'incident.resolved')), 30_000, 'incident.resolved');
    const data = event.event.data as { id: string; attack?: { type: string; peak: { pps: number } } };
    expect([data.id, data.attack?.type]).toEqual([resolved.id, 'syn_flood']);
    expect(data.attack?.peak.pps).toBeGreaterThanOrEqual(3_000);
  });

  test('background traffic alone opens no incident', async () => {
    const key = await workspace();
    await post(key, background(Date.now() - 60_000, 12));
    await drained();
    expect(await incidents(key)).toEqual([]);
  });

  test('a flood from a whitelisted source prefix opens no incident', async () => {
    const key = await workspace({ whitelist: { sources: ['198.51.100.0/24'] } });
    await post(key, synFlood('203.0.113.9', Date.now() - 60_000, 12));
    await drained();
    expect(await incidents(key)).toEqual([]);
  });

  test('an IPv6 flood is detected as an IPv4 one is', async () => {
    const key = await workspace();
    await post(key, synFlood('2001:db8::9', Date.now() - 60_000, 12));
    await drained();
    const opened = await waitFor(async () => ((await incidents(key)).length > 0 ? incidents(key) : undefined), 30_000, 'an incident');
    expect(opened.map((i) => i.service)).toEqual(['2001:db8::9']);
    expect((await incident(key, opened[0]!.id)).attack?.type).toBe('syn_flood');
  });

  test('a flood that goes on across a restart of the detectors (their held flows redelivered to the successor) keeps one incident', async () => {
    const key = await workspace();
    const start = Date.now() - 60_000;
    await post(key, synFlood('203.0.113.9', start, 8));
    await waitForTelemetryDrained(t.stack.nats.jsm, t.stack.config.nats.prefix);
    await waitFor(async () => ((await incidents(key)).length > 0 ? true : undefined), 30_000, 'the first incident');
    await t.restart();
    await post(key, synFlood('203.0.113.9', start + 8_000, 8));
    await drained();
    const all = await incidents(key);
    expect(all.map((i) => i.service)).toEqual(['203.0.113.9']);
    const signals = (await t.request<Page<{ event_id: string }>>('GET', `/v1/incidents/${all[0]!.id}/signals?limit=500`, { key })).body.data.map((s) => s.event_id);
    expect(new Set(signals).size).toBe(signals.length);
  });
});
