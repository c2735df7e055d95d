import type { HealthView, IncidentView, Page, ReplayRequested, ReplayView } from '../support/api-types';
import { startTestStack, type TestStack } from '../support/test-stack';
import { waitFor, waitForTelemetryDrained, waitForWebhooksDrained } from '../support/wait';
import { ContractChecker, type OpenApiDoc } from '../support/openapi-check';
import { WebhookReceiver, type Received } from '../support/webhook-receiver';
import { outboxNames } from '../../streams/names';

/**
 * Outbound webhooks end to end on the real engines: incidents and replays
 * change, the outbox carries their CloudEvents, a real HTTP receiver on
 * loopback (allowed by WEBHOOK_ALLOWED_HOSTS) gets them signed, with retries.
 */
const signal = { telemetry: 'bgp', service: 'edge', environment: 'prod', region: 'eu-west-1', asn: 64500, latency_ms: 40 };
const allTypes = [
  'incident.opened', 'incident.escalated', 'incident.acknowledged', 'incident.resolved',
  'replay.awaiting_approval', 'replay.completed', 'replay.denied', 'replay.expired',
];

interface Created { id: string; secret: string; status: string }
interface DeliveryView { event_id: string; event_type: string; status: string; attempts: number; response_code: number | null; latency_ms: number }

describe('webhooks', () => {
  let t: TestStack;
  const receiver = new WebhookReceiver();
  beforeAll(async () => {
    t = await startTestStack('chdb', {
      ROLES: 'api,stream-workers,temporal-worker',
      WORKER_MAX_WAIT_MS: '20',
      WEBHOOK_ALLOWED_HOSTS: '127.0.0.1,localhost',
      WEBHOOK_RETRY_BASE_MS: '200',
      WEBHOOK_RETRY_MAX_MS: '1000',
      WEBHOOK_TIMEOUT_MS: '2000',
    });
    await receiver.start();
  });
  afterAll(async () => {
    await receiver.stop();
    await t.stop();
  });

  async function subscribe(key: string, url: string, events = allTypes): Promise<Created> {
    const res = await t.request<Created>('POST', '/v1/webhooks', { key, body: { url, events, description: 'test receiver' } });
    expect(res.status).toBe(201);
    return res.body;
  }

  async function replayReaches(key: string, id: string, status: string) {
    return waitFor(async () => {
      const r = await t.request<ReplayView>('GET', `/v1/replays/${id}`, { key });
      return r.body.status === status ? r.body : undefined;
    }, 30_000, `replay ${status}`);
  }

  const deliveredOf = (orgId: string) => receiver.delivered().filter((r) => r.headers['webhook-id'] && r.body.includes(`"workspace":"${orgId}"`));

  async function driveEveryEvent(operator: { key: string }, approver: { key: string }) {
    await t.request('POST', '/ingest', { key: operator.key, body: signal });
    const incident = await waitFor(async () => (await t.request<Page<IncidentView>>('GET', '/v1/incidents', { key: operator.key })).body.data[0]);
    await t.request('POST', '/ingest', { key: operator.key, body: { ...signal, telemetry: 'dns', latency_ms: 1500 } });
    await waitFor(async () => ((await t.request<IncidentView>('GET', `/v1/incidents/${incident.id}`, { key: operator.key })).body.severity === 'critical' ? true : undefined));
    // A signal that changes neither state nor severity: a recomputation that notifies nobody.
    await t.request('POST', '/ingest', { key: operator.key, body: signal });
    await waitForTelemetryDrained(t.stack.nats.jsm, t.stack.config.nats.prefix);
    expect((await t.request('POST', `/v1/incidents/${incident.id}/acknowledge`, { key: operator.key })).status).toBe(200);

    const policy = (await t.request<{ id: string }>('POST', '/v1/policies', { key: operator.key, body: { name: 'gate', requires_approval: true } })).body;
    const replay = async () => (await t.request<ReplayRequested>('POST', '/v1/replay', { key: operator.key, body: { incident_id: incident.id } })).body.replay_id;
    const approved = await replay();
    await replayReaches(operator.key, approved, 'awaiting_approval');
    expect((await t.request('POST', `/v1/replays/${approved}/approve`, { key: approver.key })).status).toBe(202);
    await replayReaches(operator.key, approved, 'completed');
    const denied = await replay();
    await replayReaches(operator.key, denied, 'awaiting_approval');
    expect((await t.request('POST', `/v1/replays/${denied}/deny`, { key: approver.key })).status).toBe(202);
    await replayReaches(operator.key, denied, 'denied');
    await t.request('PATCH', `/v1/policies/${policy.id}`, { key: operator.key, body: { approval_timeout_minutes: 0.05 } });
    const expired = await replay();
    await replayReaches(operator.key, expired, 'expired');
    expect((await t.request('POST', `/v1/incidents/${incident.id}/resolve`, { key: operator.key })).status).toBe(200);
    return { incident, replays: [approved, denied, expired] };
  }

  test('a receiver gets each event once, signed, and a retried delivery after answering 500 twice', async () => {
    const operator = await t.mintKey({ role: 'operator' });
    const approver = await t.mintKey({ role: 'approver', orgId: operator.org_id });
    const hook = await subscribe(operator.key, receiver.url('/all'));
    expect(hook.secret).toMatch(/^whsec_/);
    // The first event this receiver sees is answered 500 twice.
    let failing: string | undefined;
    let failuresLeft = 2;
    receiver.respond = (r) => {
      if (r.path !== '/all') return { status: 200 };
      failing ??= String(r.headers['webhook-id']);
      return r.headers['webhook-id'] === failing && failuresLeft-- > 0 ? { status: 500 } : { status: 200 };
    };

    const { incident, replays } = await driveEveryEvent(operator, approver);
    const expected = [
      ...['incident.opened', 'incident.escalated', 'incident.acknowledged', 'incident.resolved'].map((type) => `${type} ${incident.id}`),
      ...replays.map((id) => `replay.awaiting_approval ${id}`),
      `replay.completed ${replays[0]}`, `replay.denied ${replays[1]}`, `replay.expired ${replays[2]}`,
    ].sort();
    await waitFor(() => Promise.resolve(deliveredOf(operator.org_id).length >= expected.length ? true : undefined), 30_000, 'every event');
    // Nothing more arrives: every event of the workspace left the outbox and its deliveries, so each change notified once.
    await waitForWebhooksDrained(t.stack.nats.jsm, t.stack.config.nats.prefix, operator.org_id);
    const delivered = deliveredOf(operator.org_id);
    expect(delivered.map((r) => `${r.event.type} ${r.event.subject}`).sort()).toEqual(expected);
    expect(new Set(delivered.map((r) => r.headers['webhook-id'])).size).toBe(expected.length);
    const checker = new ContractChecker((await t.request<OpenApiDoc>('GET', '/v1/openapi.json')).body);
    for (const r of receiver.received.filter((x) => x.path === '/all')) {
      expect(checker.eventProblems(r.event)).toEqual([]);
      expect(receiver.verified(r, hook.secret)).toBe(true);
      expect(r.headers['content-type']).toBe('application/cloudevents+json');
      expect(r.event).toMatchObject({ specversion: '1.0', id: r.headers['webhook-id'], datacontenttype: 'application/json' });
      expect(receiver.verified(r, `whsec_${Buffer.alloc(32).toString('base64')}`)).toBe(false);
    }
    // The first event was answered 500 twice, then delivered on the third attempt.
    const first: Received = receiver.received.find((r) => r.path === '/all')!;
    expect(receiver.received.filter((r) => r.headers['webhook-id'] === first.headers['webhook-id']).map((r) => r.status)).toEqual([500, 500, 200]);
    const log = await waitFor(async () => {
      const page = (await t.request<Page<DeliveryView>>('GET', `/v1/webhooks/${hook.id}/deliveries`, { key: operator.key })).body.data;
      return page.length === expected.length && page.every((d) => d.status === 'delivered') ? page : undefined;
    }, 10_000, 'the delivery log');
    expect(log.find((d) => d.event_id === first.headers['webhook-id'])).toMatchObject({ status: 'delivered', attempts: 3, response_code: 200 });
    const metrics = (await t.request('GET', '/metrics', { key: t.adminKey })).text;
    expect(metrics).toMatch(/nettel_webhook_deliveries_total\{outcome="retrying"\} [1-9]/);
    expect(metrics).toMatch(/nettel_webhook_attempts_total\{result="5xx"\} [1-9]/);
  });

  test('a receiver down for a while gets every event after it returns', async () => {
    const operator = await t.mintKey({ role: 'operator' });
    const down = new WebhookReceiver();
    await down.start();
    const url = down.url('/down');
    await down.stop();
    const hook = await subscribe(operator.key, url, ['incident.opened']);
    const regions = ['r1', 'r2', 'r3'];
    for (const region of regions) await t.request('POST', '/ingest', { key: operator.key, body: { ...signal, region } });
    await waitFor(async () => {
      const page = (await t.request<Page<DeliveryView>>('GET', `/v1/webhooks/${hook.id}/deliveries`, { key: operator.key })).body.data;
      return page.length === 3 && page.every((d) => d.status === 'retrying' && d.attempts >= 2) ? true : undefined;
    }, 30_000, 'failed attempts while the receiver is down');
    await down.start(down.port);
    try {
      const got = await waitFor(() => Promise.resolve(down.delivered().length >= 3 ? down.delivered() : undefined), 30_000, 'the backlog');
      expect(got.map((r) => r.event.data.region).sort()).toEqual(regions);
      expect(got.every((r) => down.verified(r, hook.secret))).toBe(true);
    } finally {
      await down.stop();
    }
  });

  test('both outbox consumers show in /healthz, and one deleted under its loop is made again and goes on delivering', async () => {
    const health = await t.request<HealthView>('GET', '/healthz');
    expect([health.body.loops['webhook-fanout']?.status, health.body.loops['webhook-delivery']?.status]).toEqual(['up', 'up']);
    const n = outboxNames(t.stack.config.nats.prefix);
    await t.stack.nats.jsm.consumers.delete(n.outbox, n.fanout);
    await waitFor(async () => {
      const text = (await t.request('GET', '/metrics', { key: t.adminKey })).text;
      return new RegExp(`nettel_webhook_consume_restarts_total\\{consumer="${n.fanout}",reason="[a-z_]+"\\} [1-9]`).test(text) ? true : undefined;
    }, 10_000, 'the fan-out reopened');
    await waitFor(async () => ((await t.request<HealthView>('GET', '/healthz')).body.loops['webhook-fanout']?.status === 'up' ? true : undefined), 10_000, 'the fan-out up');

    const operator = await t.mintKey({ role: 'operator' });
    await subscribe(operator.key, receiver.url('/after-delete'), ['incident.opened']);
    await t.request('POST', '/ingest', { key: operator.key, body: signal });
    await waitFor(() => Promise.resolve(deliveredOf(operator.org_id).length ? true : undefined), 30_000, 'the incident delivered');
  });

  test('a redirect is not followed: the attempt fails with its status', async () => {
    const operator = await t.mintKey({ role: 'operator' });
    receiver.respond = (r) => (r.path === '/moved' ? { status: 307, headers: { location: receiver.url('/target') } } : { status: 200 });
    const hook = await subscribe(operator.key, receiver.url('/moved'), ['incident.opened']);
    await t.request('POST', '/ingest', { key: operator.key, body: { ...signal, region: 'redirect' } });
    const log = await waitFor(async () => {
      const page = (await t.request<Page<DeliveryView>>('GET', `/v1/webhooks/${hook.id}/deliveries`, { key: operator.key })).body.data;
      return page[0] && page[0].attempts >= 2 ? page[0] : undefined;
    }, 30_000, 'failed attempts');
    expect(log).toMatchObject({ status: 'retrying', response_code: 307 });
    expect(receiver.received.filter((r) => r.path === '/target')).toEqual([]);
  });

  test('subscriptions are listed, changed, tested, deleted and audited; the secret is never shown again', async () => {
    const operator = await t.mintKey({ role: 'operator' });
    const analyst = await t.mintKey({ role: 'analyst', orgId: operator.org_id });
    const other = await t.mintKey({ role: 'operator' });
    const hook = await subscribe(operator.key, receiver.url('/crud'), ['incident.opened']);
    expect((await t.request('POST', '/v1/webhooks', { key: analyst.key, body: { url: receiver.url(), events: ['incident.opened'] } })).status).toBe(403);
    expect((await t.request('POST', '/v1/webhooks', { key: operator.key, body: { url: receiver.url(), events: ['nope'] } })).status).toBe(400);
    const listed = await t.request<Page<Record<string, unknown>>>('GET', '/v1/webhooks', { key: analyst.key });
    expect(listed.body.data.map((w) => w.id)).toEqual([hook.id]);
    expect(listed.text).not.toContain(hook.secret.slice(6));
    expect((await t.request('GET', `/v1/webhooks/${hook.id}`, { key: other.key })).status).toBe(404);
    const patched = await t.request<{ events: string[]; version: number }>('PATCH', `/v1/webhooks/${hook.id}`, { key: operator.key, body: { events: ['incident.resolved'] } });
    expect(patched.body).toMatchObject({ events: ['incident.resolved'], version: 2 });
    const tested = await t.request<{ event_id: string }>('POST', `/v1/webhooks/${hook.id}/test`, { key: operator.key });
    expect(tested.status).toBe(202);
    const got = await waitFor(() => Promise.resolve(receiver.delivered().find((r) => r.headers['webhook-id'] === tested.body.event_id)));
    expect(got.event.type).toBe('webhook.test');
    expect(new ContractChecker((await t.request<OpenApiDoc>('GET', '/v1/openapi.json')).body).eventProblems(got.event)).toEqual([]);
    expect(receiver.verified(got, hook.secret)).toBe(true);
    expect((await t.request('DELETE', `/v1/webhooks/${hook.id}`, { key: operator.key })).status).toBe(200);
    expect((await t.request('DELETE', `/v1/webhooks/${hook.id}`, { key: operator.key })).status).toBe(409);
    const audit = (await t.request<Page<{ action: string; target: string }>>('GET', '/v1/audit', { key: operator.key })).body.data;
    expect(audit.filter((e) => e.target === hook.id).map((e) => e.action)).toEqual(['webhook.delete', 'webhook.update', 'webhook.create']);
    expect(t.logs.join('')).not.toContain(hook.secret.slice(6));
  });
});
