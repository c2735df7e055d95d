import type { IncidentView, Page, ReplayRequested, ReplayView } from '../support/api-types';
import { startTestStack, type TestStack } from '../support/test-stack';
import { waitFor } from '../support/wait';
import { orgIs, waitForStoredCount } from '../support/stored-count';

/**
 * A replay whose history holds a million flows: a traffic-volume incident on
 * one destination, replayed from the raw flows by ClickHouse aggregation.
 * `npm run bench` measures the same replay's time (replay_1m_s).
 */
const total = 1_000_000;
const batch = 10_000;
const dst = '198.51.100.7';

function flowBatch(start: number, now: number): string {
  const lines: string[] = [];
  for (let i = start; i < start + batch; i += 1) {
    lines.push(
      `{"src_ip":"10.9.${(i >> 8) & 3}.${i & 255}","dst_ip":"${dst}","bytes":10000,"packets":8,"protocol":"tcp","timestamp":${now - 300_000 + (i % 300_000)}}`,
    );
  }
  return lines.join('\n');
}

/**
 * Posts one batch as a client should: a 503 is JetStream's backpressure (its
 * store is busy on a loaded machine) and carries Retry-After; the batch is
 * sent again with the same Idempotency-Key once that time has passed.
 */
async function postUntilAccepted(t: TestStack, key: string, raw: string, idempotencyKey: string): Promise<number> {
  for (;;) {
    const a = await t.request('POST', '/flow', { key, raw, contentType: 'application/x-ndjson', headers: { 'idempotency-key': idempotencyKey } });
    if (a.status !== 503) return a.status;
    await new Promise((r) => setTimeout(r, 1000 * Number(a.headers.get('retry-after') ?? 1)));
  }
}

describe('replay of a million flows', () => {
  let t: TestStack;
  beforeAll(async () => {
    t = await startTestStack('chdb', { ROLES: 'api,stream-workers,temporal-worker', WORKER_MAX_MESSAGES: '64' });
  });
  afterAll(async () => {
    await t.stop();
  });

  test('the replay of a traffic incident over 1,000,000 flows completes with parity', async () => {
    const operator = await t.mintKey({ role: 'operator' });
    // The flows come back over the same 300 s three times, so the windows still open at the end cross the rate
    // detectors' default bounds, and their early signals (version 2) join this incident; a traffic-volume incident's
    // replay does not re-run the rate detectors (a gap the detection page names). This test is of the traffic-volume
    // replay over a million flows: the rate detectors are kept quiet.
    const admin = await t.mintKey({ role: 'admin', orgId: operator.org_id });
    const quiet = { rates: { thresholds: { total: { pps: 1_000_000_000, bps: 1_000_000_000_000, fps: 1_000_000_000 } } } };
    expect((await t.request('PUT', '/v1/detection-rules', { key: admin.key, body: quiet })).status).toBe(200);
    const now = Math.floor(Date.now() / 60_000) * 60_000;
    for (let i = 0; i < total; i += batch * 4) {
      const answers = await Promise.all([0, 1, 2, 3].map((k) => postUntilAccepted(t, operator.key, flowBatch(i + k * batch, now), `volume-${i + k * batch}`)));
      for (const status of answers) expect(status).toBe(201);
    }
    const stored = await waitForStoredCount(t.stack.clickhouse, 'flows', total, { where: orgIs(operator.org_id), timeoutMs: 120_000, what: 'a million flows in ClickHouse' });
    expect(stored).toBe(total);
    const incident = await waitFor(async () => {
      const r = await t.request<Page<IncidentView>>('GET', `/v1/incidents?service=${dst}`, { key: operator.key });
      return (r.body.data[0]?.signal_count ?? 0) >= 5 ? r.body.data[0] : undefined;
    }, 30_000, 'the traffic incident');
    expect(incident).toMatchObject({ environment: 'network', rule: 'traffic_volume>=1000000000B/min', kinds: ['flow'] });

    const started = Date.now();
    const id = (await t.request<ReplayRequested>('POST', '/v1/replay', { key: operator.key, body: { incident_id: incident.id } })).body.replay_id;
    const done = await waitFor(async () => {
      const r = await t.request<ReplayView>('GET', `/v1/replays/${id}`, { key: operator.key });
      return r.body.status === 'completed' || r.body.status === 'failed' ? r.body : undefined;
    }, 60_000, 'the replay');
    expect(done.status).toBe('completed');
    expect(done.report).toMatchObject({ parity: true });
    expect(done.report?.automation.flows_examined).toBe(total);
    expect(done.report?.automation.actions[0]).toMatchObject({ action: 'rate_limit', dst_ip: dst });
    // Reported, not asserted: speed is measured by `npm run bench`.
    process.stdout.write(`replay of ${total} flows took ${(Date.now() - started) / 1000}s\n`);
  });
});
