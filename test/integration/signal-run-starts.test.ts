import { randomBytes } from 'node:crypto';
import type { SignalRow } from '../../core/telemetry';
import type { ClickHouse } from '../../storage/clickhouse';
import { TelemetryStore } from '../../storage/telemetry-store';
import { startTestStack, transports, type TestStack } from '../support/test-stack';

/**
 * Where the correlator starts recomputing a key: the start of the run of
 * signals (each within the window of the next) that a new signal joins.
 * Every key a write touched is walked back in one statement a round, the
 * first round an hour back, each next one four times further, for the keys
 * whose run reaches past it.
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

  /** A store over the stack's ClickHouse that counts the statements it sends. */
  function countingStore() {
    const ch = t.stack.clickhouse;
    const statements: string[] = [];
    const counted: ClickHouse = Object.assign(Object.create(ch) as ClickHouse, { query: <T,>(sql: string) => (statements.push(sql), ch.query<T>(sql)) });
    return { store: new TelemetryStore(counted), statements };
  }

  test("each key's run starts at its own first signal within the window, found for every key in one statement", async () => {
    const org = `org_${randomBytes(6).toString('hex')}`;
    const now = Date.now();
    const rows = [
      // "short": a run of three signals 10 minutes apart, after a gap of an hour.
      ...[now - 90 * minute, now - 20 * minute, now - 10 * minute].map((ts) => signal(org, 'short', ts)),
      // "alone": its only earlier signal is further back than the window.
      signal(org, 'alone', now - 40 * minute),
      // Another workspace's signal on the same key name is not this one's.
      signal(`${org}x`, 'short', now - 25 * minute),
    ];
    await new TelemetryStore(t.stack.clickhouse).insert('signals', rows.map((r) => JSON.stringify(r)).join('\n') + '\n');
    const { store, statements } = countingStore();
    const key = (service: string) => ({ service, environment: 'production', region: 'eu', since: now });
    expect(await store.runStarts(org, [key('short'), key('alone')], 15 * minute)).toEqual([now - 20 * minute, now]);
    expect(statements).toHaveLength(1);
  });

  test('a run longer than the first hour is followed further back for its key alone', async () => {
    const org = `org_${randomBytes(6).toString('hex')}`;
    const now = Date.now();
    // "long": one signal every 20 minutes for three hours; "short": one 5 minutes before.
    const long = Array.from({ length: 9 }, (_, i) => signal(org, 'long', now - (i + 1) * 20 * minute));
    await new TelemetryStore(t.stack.clickhouse).insert('signals', [...long, signal(org, 'short', now - 5 * minute)].map((r) => JSON.stringify(r)).join('\n') + '\n');
    const { store, statements } = countingStore();
    const key = (service: string) => ({ service, environment: 'production', region: 'eu', since: now });
    expect(await store.runStarts(org, [key('long'), key('short')], 30 * minute)).toEqual([now - 180 * minute, now - 5 * minute]);
    // The first round reads both keys; the second, four hours back, reads "long" alone.
    expect(statements).toHaveLength(2);
    expect(statements[1]).not.toContain("'short'");
  });
});
