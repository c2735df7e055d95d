import type { ErrorBody, IncidentView, Page, ReplayView } from '../support/api-types';
import { synFlood } from '../support/detection-flows';
import { replayInStatus } from '../support/replays';
import { startTestStack, transports, type TestStack } from '../support/test-stack';
import { waitFor, waitForDetectionDrained, waitForTelemetryDrained } from '../support/wait';

/**
 * The replay of an incident the rate detectors opened re-runs the detector
 * version its rule names, under the rules version it recorded, on the
 * stored flows towards its target, and reports parity with what was opened.
 */
describe.each(transports)('the replay of a rate incident on %s', (transport) => {
  let t: TestStack;
  beforeAll(async () => {
    t = await startTestStack(transport, { ROLES: 'api,stream-workers,temporal-worker', WORKER_MAX_WAIT_MS: '20' });
  });
  afterAll(() => t.stop());

  async function floodIncident(rates: object, target: string) {
    const { key } = await t.mintKey({ role: 'admin' });
    expect((await t.request('PUT', '/v1/detection-rules', { key, body: { rates } })).status).toBe(200);
    const flows = synFlood(target, Date.now() - 60_000, 12);
    for (let i = 0; i < flows.length; i += 500) expect((await t.request<ErrorBody>('POST', '/flow', { key, body: flows.slice(i, i + 500) })).status).toBe(201);
    await waitForTelemetryDrained(t.stack.nats.jsm, t.stack.config.nats.prefix);
    await waitForDetectionDrained(t.stack.nats.jsm, t.stack.config.nats.prefix);
    const incidents = async () => (await t.request<Page<IncidentView>>('GET', '/v1/incidents?limit=10', { key })).body.data;
    const [incident] = await waitFor(async () => ((await incidents()).length > 0 ? incidents() : undefined), 30_000, 'the incident');
    return { key, incident: incident! };
  }

  async function replayOf(key: string, incidentId: string): Promise<ReplayView> {
    const requested = await t.request<{ replay_id: string }>('POST', '/v1/replay', { key, body: { incident_id: incidentId } });
    expect(requested.status).toBe(202);
    return replayInStatus(t, key, requested.body.replay_id, 'completed', 60_000);
  }

  test('a replay of a SYN flood incident re-runs the rate detector on the stored flows and reports parity', async () => {
    const { key, incident } = await floodIncident({ thresholds: { total: { pps: 3_000 } } }, '203.0.113.21');
    expect(incident.rule).toBe('rate.v2:host');
    const replay = await replayOf(key, incident.id);
    expect(replay.report).toMatchObject({ parity: true, differences: [], replayed: { id: incident.id, rule: incident.rule, signal_count: incident.signal_count } });
  });

  test('a replay runs under the rules the incident recorded, not those set since', async () => {
    const { key, incident } = await floodIncident({ thresholds: { total: { pps: 3_000 } } }, '203.0.113.22');
    // Under these rules the flood would cross nothing: a replay that read them would find no incident.
    expect((await t.request('PUT', '/v1/detection-rules', { key, body: { rates: { thresholds: { total: { pps: 1_000_000 } } } } })).status).toBe(200);
    const replay = await replayOf(key, incident.id);
    expect(replay.report).toMatchObject({ parity: true, replayed: { id: incident.id, signal_count: incident.signal_count } });
  });
});
