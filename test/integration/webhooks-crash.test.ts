import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startWorkerProcess as startWorker } from '../support/worker-process';
import { startTestStack, type TestStack } from '../support/test-stack';
import { waitFor } from '../support/wait';
import { WebhookReceiver } from '../support/webhook-receiver';

/**
 * At-least-once across a crash: the stream workers (which correlate and
 * deliver) run as their own process, killed with SIGKILL while an incident's
 * event is on its way to the receiver. The event waits in JetStream and the
 * restarted process delivers it.
 */
const signal = { telemetry: 'bgp', service: 'edge', environment: 'prod', region: 'crash-1', asn: 64500, latency_ms: 40 };

describe('webhook delivery across a crash', () => {
  let t: TestStack;
  let workerDir: string;
  const receiver = new WebhookReceiver();
  const settings = { WEBHOOK_ALLOWED_HOSTS: '127.0.0.1', WEBHOOK_TIMEOUT_MS: '3000', WEBHOOK_RETRY_BASE_MS: '200', WEBHOOK_RETRY_MAX_MS: '1000' };
  beforeAll(async () => {
    t = await startTestStack('clickhouse-server', { ROLES: 'api', ...settings });
    workerDir = fs.mkdtempSync(path.join(os.tmpdir(), 'nettel-webhook-worker-'));
    await receiver.start();
  });
  afterAll(async () => {
    await receiver.stop();
    await t.stop();
    fs.rmSync(workerDir, { recursive: true, force: true });
  });

  const startWorkerProcess = () => startWorker(t.stack.config, workerDir, settings);

  test('an event on its way when the service is killed -9 is delivered by the restarted service', async () => {
    const operator = await t.mintKey({ role: 'operator' });
    const hook = await t.request<{ id: string; secret: string }>('POST', '/v1/webhooks', {
      key: operator.key,
      body: { url: receiver.url('/crash'), events: ['incident.opened'] },
    });
    expect(hook.status).toBe(201);
    // The receiver takes the first request and never answers it: the delivery is in flight when the process dies.
    receiver.respond = () => new Promise(() => undefined);

    const first = startWorkerProcess();
    await t.request('POST', '/ingest', { key: operator.key, body: signal });
    const inFlight = await waitFor(() => Promise.resolve(receiver.received[0]), 60_000, 'the first attempt');
    first.child.kill('SIGKILL');
    await first.exited;
    receiver.respond = () => ({ status: 200 });

    const second = startWorkerProcess();
    try {
      const delivered = await waitFor(() => Promise.resolve(receiver.delivered()[0]), 60_000, 'the delivery after the restart');
      expect(delivered.headers['webhook-id']).toBe(inFlight.headers['webhook-id']);
      expect(delivered.event).toMatchObject({ type: 'incident.opened', data: { region: 'crash-1' } });
      expect(receiver.verified(delivered, hook.body.secret)).toBe(true);
      const log = await waitFor(async () => {
        const page = (await t.request<{ data: Array<{ status: string; attempts: number }> }>('GET', `/v1/webhooks/${hook.body.id}/deliveries`, { key: operator.key })).body.data;
        return page[0]?.status === 'delivered' ? page[0] : undefined;
      }, 10_000, 'the delivery log');
      expect(log.attempts).toBeGreaterThanOrEqual(2);
    } finally {
      second.child.kill('SIGTERM');
      await second.exited;
    }
  });
});
