import { QuietResolutions } from '../../application/quiet-resolutions';
import type { Transition } from '../../core/correlation';
import type { RateQuiet } from '../../core/detection/quiet';
import type { StoredIncident } from '../../storage/incidents-repo';

const t0 = 1_800_000_000_000;

const incident = (over: Partial<StoredIncident> = {}): StoredIncident => ({
  id: 'inc_1',
  org_id: 'org1',
  service: '203.0.113.9',
  environment: 'network',
  region: 'global',
  severity: 'high',
  state: 'open',
  source: 'deterministic_engine',
  rule: 'rate.v1:host:syn_flood:total.pps>=100',
  escalations: [],
  first_seen: t0 - 1,
  last_seen: t0 + 5_999,
  signal_count: 3,
  kinds: ['flow'],
  max_latency_ms: 0,
  total_bytes: 0,
  version: 3,
  rules_version: 1,
  updated_at: 0,
  superseded: false,
  ...over,
});

const quiet: RateQuiet = { scope: 'host', target: '203.0.113.9', host_group: '', last_crossed_end: t0 + 6_000, quiet_end: t0 + 16_000, quiet_seconds: 10, detector_version: 1 };

function harness(stored: StoredIncident[], audited: string[] = []) {
  const transitions: Array<[Transition, string]> = [];
  const recomputed: string[] = [];
  const entries: Array<{ actor: string; action: string; target: string; details?: Record<string, unknown> }> = [];
  const resolutions = new QuietResolutions({
    incidents: {
      list: (_org, filters) => Promise.resolve(stored.filter((i) => (!filters.service || i.service === filters.service) && (!filters.state || i.state === filters.state) && (filters.since === undefined || i.last_seen >= filters.since))),
      addTransition: (_org, t, actor) => (transitions.push([t, actor]), Promise.resolve()),
    },
    correlator: { recompute: (_org, changes) => (recomputed.push(...changes.map((c) => c.service)), Promise.resolve()) },
    audit: {
      recorded: (_org, action, target) => Promise.resolve(audited.includes(`${action} ${target}`)),
      append: (e) => (entries.push(e), Promise.resolve()),
    },
    now: () => t0 + 60_000,
  });
  return { resolutions, transitions, recomputed, entries };
}

describe('resolutions of quiet targets', () => {
  test('the open incident holding the last crossing is resolved through its last signal by the rate detector, audited, and its key recomputed', async () => {
    const h = harness([incident()]);
    expect(await h.resolutions.resolve('org1', quiet)).toBe('resolved');
    expect(h.transitions.map(([t, actor]) => [t.incident_id, t.state, t.through_ts, actor])).toEqual([['inc_1', 'resolved', t0 + 5_999, 'rate-detector']]);
    expect(h.entries.map((e) => [e.actor, e.action, e.target, e.details?.reason])).toEqual([['rate-detector', 'incident.resolve', 'inc_1', 'quiet']]);
    expect(h.recomputed).toEqual(['203.0.113.9']);
  });

  test('a resolution already audited (a report made again after a crash) is not audited twice', async () => {
    const h = harness([incident()], ['incident.resolve inc_1']);
    expect(await h.resolutions.resolve('org1', quiet)).toBe('resolved');
    expect(h.entries).toEqual([]);
    expect(h.transitions.length).toBe(1);
  });

  test('an incident another signal joined after the last crossing is left open', async () => {
    const h = harness([incident({ last_seen: t0 + 30_000 })]);
    expect(await h.resolutions.resolve('org1', quiet)).toBe('later_signal');
    expect([h.transitions, h.entries]).toEqual([[], []]);
  });

  test('an incident a person already resolved is left as it is', async () => {
    const h = harness([incident({ state: 'resolved' })]);
    expect(await h.resolutions.resolve('org1', quiet)).toBe('already_resolved');
    expect([h.transitions, h.entries]).toEqual([[], []]);
  });

  test('a quiet target without an incident resolves nothing', async () => {
    const h = harness([incident({ service: '203.0.113.10' })]);
    expect(await h.resolutions.resolve('org1', quiet)).toBe('no_incident');
  });

  test("the workspace's rate incidents not yet resolved are taken as crossing since their last signal; other detectors' are not", async () => {
    const h = harness([
      incident(),
      incident({ id: 'inc_2', service: '203.0.113.0/24', rule: 'rate.v1:prefix:carpet:total.pps>=1', state: 'acknowledged', last_seen: t0 + 999 }),
      incident({ id: 'inc_3', service: '203.0.113.11', rule: 'traffic_volume>=1B/min' }),
      incident({ id: 'inc_4', service: '203.0.113.12', state: 'resolved' }),
    ]);
    expect(await h.resolutions.crossings('org1')).toEqual([
      { scope: 'host', target: '203.0.113.9', host_group: '', last_crossed_end: t0 + 6_000 },
      { scope: 'prefix', target: '203.0.113.0/24', host_group: '', last_crossed_end: t0 + 1_000 },
    ]);
  });

  test("version 2's rate incidents, whose rule names the scope only, are taken as crossing as version 1's are", async () => {
    const h = harness([
      incident({ rule: 'rate.v2:host' }),
      incident({ id: 'inc_2', service: '203.0.113.0/24', rule: 'rate.v2:prefix', last_seen: t0 + 999 }),
    ]);
    expect(await h.resolutions.crossings('org1')).toEqual([
      { scope: 'host', target: '203.0.113.9', host_group: '', last_crossed_end: t0 + 6_000 },
      { scope: 'prefix', target: '203.0.113.0/24', host_group: '', last_crossed_end: t0 + 1_000 },
    ]);
  });
});
