import type { IncidentView, Page } from '../support/api-types';
import { generateFlows } from '../support/flows';
import { streamWorkerOn } from '../support/stream-worker';
import { startTestStack, type TestStack } from '../support/test-stack';
import { waitFor, waitForTelemetryDrained } from '../support/wait';
import { names } from '../../streams/names';

/**
 * After an outage the workers find a flow backlog; correlation signals
 * posted after it travel on their own consumer (streams/topology.ts, lanes),
 * so an incident opens while the flows still drain instead of after them.
 */
describe('correlation signals beside a flow backlog', () => {
  let t: TestStack;
  beforeAll(async () => {
    // No stream workers: the backlog builds up as while they were away.
    t = await startTestStack('chdb', { ROLES: 'api' });
  });
  afterAll(async () => {
    await t.stop();
  });

  test('an incident opens while the flow backlog ahead of its signals is still draining', async () => {
    const { key } = await t.mintKey({ role: 'operator' });
    const flows = generateFlows(300_000, 5_000, 19);
    for (const body of flows.batches) expect((await t.request('POST', '/flow', { key, raw: body, contentType: 'application/x-ndjson' })).status).toBe(201);
    const now = Date.now();
    const signals = (['flow', 'bgp', 'dns'] as const).map((telemetry, i) => ({
      service: 'checkout', environment: 'prod', region: 'eu-west-1', telemetry, timestamp: now - 30_000 + i * 1_000, latency_ms: 500,
    }));
    expect((await t.request('POST', '/ingest', { key, body: signals })).status).toBe(202);

    const worker = streamWorkerOn(t);
    await worker.start();
    try {
      await waitFor(async () => {
        const res = await t.request<Page<IncidentView>>('GET', '/v1/incidents', { key });
        return res.body.data.length === 1 ? true : undefined;
      }, 60_000, 'the incident');
      const n = names(t.stack.config.nats.prefix);
      const flowsLane = await t.stack.nats.jsm.consumers.info(n.stream, n.writers);
      expect(flowsLane.num_pending + flowsLane.num_ack_pending).toBeGreaterThan(0);
      await waitForTelemetryDrained(t.stack.nats.jsm, t.stack.config.nats.prefix, 120_000);
    } finally {
      await worker.stop();
    }
  });
});
