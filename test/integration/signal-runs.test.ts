import { randomBytes } from 'node:crypto';
import type { SignalRow } from '../../core/telemetry';
import { SignalRuns } from '../../storage/signal-runs';
import { TelemetryStore } from '../../storage/telemetry-store';
import { countingClickHouse } from '../support/counting-clickhouse';
import { startTestStack, transports, type TestStack } from '../support/test-stack';

/**
 * What the correlator recomputes a key from: the run of signals (each within
 * the window of the next) that a new signal joins, and the key's signals
 * from the run's start on. Every key a write touched is read in one
 * statement when its run starts within the first look back (an hour, or
 * four windows); a longer run is followed further back, for its key alone.
 */
describe.each(transports)('the runs of signals of several keys on %s', (transport) => {
  let t: TestStack;
  beforeAll(async () => {
    t = await startTestStack(transport, { ROLES: 'api' });
  });
  afterAll(() => t.stop());

  const minute = 60_000;
  const signal = (orgId: string, service: string, ts: number): SignalRow => ({
    ...{ org_id: orgId, event_id: randomBytes(12).toString('hex'), ts, received_at: ts, telemetry: 'bgp' },
    ...{ service, environment: 'production', region: 'eu', asn: 0, src_ip: '', dst_ip: '', dst_port: 0, bytes: 0, latency_ms: 0, rule: '' },
  });
  const store = (rows: SignalRow[]) => new TelemetryStore(t.stack.clickhouse).insert('signals', rows.map((r) => JSON.stringify(r)).join('\n') + '\n');
  const key = (service: string, since: number) => ({ service, environment: 'production', region: 'eu', since });
  const times = (run: { start: number; signals: SignalRow[] }) => ({ start: run.start, signals: run.signals.map((s) => s.ts).sort((a, b) => a - b) });

  /** Runs over the stack's ClickHouse, counting the statements they send. */
  function countingRuns() {
    const { ch, statements } = countingClickHouse(t.stack.clickhouse);
    return { runs: new SignalRuns(ch), statements };
  }

  test("each key's run starts at its own first signal within the window, and comes with its signals from there, every key in one statement", async () => {
    const org = `org_${randomBytes(6).toString('hex')}`;
    const now = Date.now();
    await store([
      // "short": a run of three signals 10 minutes apart after a gap of an hour, and one after `now`.
      ...[now - 90 * minute, now - 20 * minute, now - 10 * minute, now + minute].map((ts) => signal(org, 'short', ts)),
      // "alone": its only earlier signal is further back than the window.
      signal(org, 'alone', now - 40 * minute),
      // Another workspace's signal on the same key name is not this one's.
      signal(`${org}x`, 'short', now - 25 * minute),
    ]);
    const { runs, statements } = countingRuns();
    const found = await runs.runsOfKeys(org, [key('short', now), key('alone', now)], 15 * minute);
    expect(found.map(times)).toEqual([
      { start: now - 20 * minute, signals: [now - 20 * minute, now - 10 * minute, now + minute] },
      { start: now, signals: [] },
    ]);
    expect(statements).toHaveLength(1);
  });

  test('a run longer than the first look back is followed further back for its key alone, its signals read from its start', async () => {
    const org = `org_${randomBytes(6).toString('hex')}`;
    const now = Date.now();
    // "long": one signal every 20 minutes for three hours; "short": one 5 minutes before.
    const long = Array.from({ length: 9 }, (_, i) => now - (i + 1) * 20 * minute);
    await store([...long.map((ts) => signal(org, 'long', ts)), signal(org, 'short', now - 5 * minute)]);
    const { runs, statements } = countingRuns();
    const found = await runs.runsOfKeys(org, [key('long', now), key('short', now)], 30 * minute);
    expect(found.map(times)).toEqual([
      { start: now - 180 * minute, signals: [...long].sort((a, b) => a - b) },
      { start: now - 5 * minute, signals: [now - 5 * minute] },
    ]);
    // Both keys' signals in the first two hours, then "long" alone: its times four times further back, its signals from its start.
    expect(statements).toHaveLength(3);
    expect(statements.slice(1).every((s) => !s.includes("'short'"))).toBe(true);
  });
});
