import { correlate, type Transition } from '../../core/correlation';
import { seededRandom } from '../support/malformed';
import type { SignalRow, TelemetryKind } from '../../core/telemetry';

const base = Date.UTC(2026, 10, 1, 12, 0, 0);
const minute = 60_000;

function signal(n: number, over: Partial<SignalRow> = {}): SignalRow {
  return {
    org_id: 'org_a',
    event_id: `evt_${String(n).padStart(6, '0')}`,
    ts: base + n * 1000,
    received_at: 0,
    telemetry: 'flow',
    service: 'checkout',
    environment: 'prod',
    region: 'eu-west-1',
    asn: 0,
    src_ip: '',
    dst_ip: '',
    dst_port: 0,
    bytes: 10,
    latency_ms: 100,
    rule: '',
    ...over,
  };
}

/** A recorded sequence: two keys, a quiet gap that splits one key's incidents, mixed kinds. */
function recordedSequence(): SignalRow[] {
  const kinds: TelemetryKind[] = ['flow', 'bgp', 'dns', 'metric'];
  const out: SignalRow[] = [];
  for (let i = 0; i < 40; i += 1) {
    out.push(signal(i, { telemetry: kinds[i % 2]!, service: i % 3 === 0 ? 'search' : 'checkout' }));
  }
  for (let i = 0; i < 10; i += 1) out.push(signal(1000 + i, { ts: base + 20 * minute + i * 1000, telemetry: kinds[i % 4]! }));
  return out;
}

function shuffled<T>(items: T[], seed: number): T[] {
  const rand = seededRandom(seed);
  const out = [...items];
  for (let i = out.length - 1; i > 0; i -= 1) {
    const j = Math.floor(rand() * (i + 1));
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

describe('correlation engine', () => {
  test('one recorded sequence in different arrival orders, with duplicates, gives identical incidents, ids included', () => {
    const events = recordedSequence();
    const first = correlate(shuffled(events, 1));
    const withDuplicates = shuffled([...events, ...events.slice(0, 15), ...events.slice(30)], 2);
    const second = correlate(withDuplicates);
    expect(second).toEqual(first);
    expect(first.length).toBe(3);
  });

  test('the first signal of a key opens an open, high incident with an id derived from its inputs', () => {
    const [incident] = correlate([signal(1)]);
    expect(incident).toMatchObject({ state: 'open', severity: 'high', source: 'deterministic_engine', rule: 'signal', signal_count: 1 });
    expect(incident!.id).toMatch(/^inc_[0-9a-f]{20}$/);
    expect(correlate([signal(1)])[0]!.id).toBe(incident!.id);
  });

  test('signals of one key within the window join one incident', () => {
    const incidents = correlate([signal(1), signal(2, { ts: base + 4 * minute })]);
    expect(incidents).toHaveLength(1);
    expect(incidents[0]!.signal_count).toBe(2);
  });

  test('a signal more than the window after the previous one opens a new incident', () => {
    const incidents = correlate([signal(1, { ts: base }), signal(2, { ts: base + 5 * minute + 1 })]);
    expect(incidents).toHaveLength(2);
  });

  test('different keys never share an incident', () => {
    const incidents = correlate([signal(1), signal(2, { region: 'us-east-1' }), signal(3, { org_id: 'org_b' })]);
    expect(incidents).toHaveLength(3);
  });

  test('a latency of 1000 ms or more escalates to critical', () => {
    const [incident] = correlate([signal(1), signal(2, { latency_ms: 1000 })]);
    expect(incident).toMatchObject({ severity: 'critical', escalations: ['latency_ms >= 1000'] });
  });

  test('three distinct telemetry kinds in one incident escalate to critical', () => {
    const [two] = correlate([signal(1, { telemetry: 'bgp' }), signal(2, { telemetry: 'dns' })]);
    expect(two!.severity).toBe('high');
    const [three] = correlate([signal(1, { telemetry: 'bgp' }), signal(2, { telemetry: 'dns' }), signal(3, { telemetry: 'flow' })]);
    expect(three).toMatchObject({ severity: 'critical', escalations: ['3 distinct telemetry kinds'], kinds: ['bgp', 'dns', 'flow'] });
  });

  test('an acknowledged incident still takes signals and keeps its state', () => {
    const [opened] = correlate([signal(1)]);
    const ack: Transition = { incident_id: opened!.id, org_id: 'org_a', service: 'checkout', environment: 'prod', region: 'eu-west-1', state: 'acknowledged', at: base + minute, through_ts: opened!.last_seen };
    const incidents = correlate([signal(1), signal(2)], [ack]);
    expect(incidents).toHaveLength(1);
    expect(incidents[0]).toMatchObject({ state: 'acknowledged', signal_count: 2 });
  });

  test('a signal after a resolution opens a new incident', () => {
    const [opened] = correlate([signal(1)]);
    const resolve: Transition = { incident_id: opened!.id, org_id: 'org_a', service: 'checkout', environment: 'prod', region: 'eu-west-1', state: 'resolved', at: base + minute, through_ts: opened!.last_seen };
    const incidents = correlate([signal(1), signal(2)], [resolve]);
    expect(incidents.map((i) => i.state)).toEqual(['resolved', 'open']);
  });

  test('a transition raises the version, so it wins over the computation before it', () => {
    const [opened] = correlate([signal(1)]);
    const ack: Transition = { incident_id: opened!.id, org_id: 'org_a', service: 'checkout', environment: 'prod', region: 'eu-west-1', state: 'acknowledged', at: base, through_ts: opened!.last_seen };
    expect(correlate([signal(1)], [ack])[0]!.version).toBeGreaterThan(opened!.version);
  });

  test('a resolution follows its incident when a late, earlier signal gives the incident a new id', () => {
    const [opened] = correlate([signal(10), signal(11)]);
    const resolve: Transition = { incident_id: opened!.id, org_id: 'org_a', service: 'checkout', environment: 'prod', region: 'eu-west-1', state: 'resolved', at: base + minute, through_ts: opened!.last_seen };
    const incidents = correlate([signal(10), signal(11), signal(5), signal(12)], [resolve]);
    expect(incidents.map((i) => [i.state, i.signal_count])).toEqual([['resolved', 3], ['open', 1]]);
    expect(incidents[0]!.id).not.toBe(opened!.id);
  });

  test('a computation that knows of a transition outranks one with more signals that does not', () => {
    const [before] = correlate([signal(1), signal(2), signal(3)]);
    const resolve: Transition = { incident_id: before!.id, org_id: 'org_a', service: 'checkout', environment: 'prod', region: 'eu-west-1', state: 'resolved', at: base, through_ts: base + 2000 };
    const [resolved] = correlate([signal(1), signal(2), signal(3)], [resolve]);
    expect(resolved!.signal_count).toBe(2);
    expect(resolved!.version).toBeGreaterThan(before!.version);
  });
});

