import { startTestStack, transports, type TestStack } from '../support/test-stack';
import { waitFor } from '../support/wait';

const signal = {
  telemetry: 'flow',
  service: 'checkout',
  environment: 'prod',
  region: 'eu-west-1',
  asn: 64512,
  src_ip: '10.0.0.1',
  dst_ip: '10.0.0.2',
  dst_port: 443,
  bytes: 1200,
  latency_ms: 250,
};

describe.each(transports)('telemetry pipeline on %s', (transport) => {
  let t: TestStack;
  beforeAll(async () => {
    t = await startTestStack(transport, { WORKER_MAX_WAIT_MS: '100' });
  });
  afterAll(async () => {
    await t.stop();
  });

  test('one correlation record posted to /ingest is listed within 2 s as an open, high, deterministic_engine incident', async () => {
    const { key } = await t.mintKey({ role: 'operator' });
    const posted = await t.request('POST', '/ingest', { key, body: signal });
    expect(posted.status).toBe(202);
    expect(posted.body).toEqual({ status: 'accepted', event_id: expect.stringMatching(/^evt_[0-9a-f]+$/) });
    const started = Date.now();
    const incident = await waitFor(async () => {
      const res = await t.request('GET', '/v1/incidents', { key });
      return res.body.data[0];
    }, 2000, 'the incident');
    expect(Date.now() - started).toBeLessThan(2000);
    expect(incident).toMatchObject({
      id: expect.stringMatching(/^inc_[0-9a-f]{20}$/),
      severity: 'high',
      state: 'open',
      status: 'open',
      source: 'deterministic_engine',
      service: 'checkout',
      signal_count: 1,
      kinds: ['flow'],
      rule: 'signal',
    });
  });

  test('POST /flow answers 201 "Flow saved" and the flow becomes queryable', async () => {
    const { key } = await t.mintKey({ role: 'operator' });
    const res = await t.request('POST', '/flow', { key, body: { src_ip: '192.0.2.1', dst_ip: '2001:db8::1', bytes: 100, packets: 2, protocol: 'TCP' } });
    expect(res.status).toBe(201);
    expect(res.text).toBe('Flow saved');
    const flows = await waitFor(async () => {
      const r = await t.request('GET', '/v1/telemetry/flows', { key });
      return r.body.data.length ? r.body.data : undefined;
    });
    expect(flows[0]).toMatchObject({ src_ip: '192.0.2.1', dst_ip: '2001:db8::1', bytes: 100, packets: 2, protocol: 'tcp' });
  });
});
