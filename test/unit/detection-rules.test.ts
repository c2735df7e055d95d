import { DetectionRulesCache } from '../../application/detection-rules-service';
import { correlate, defaultRules } from '../../core/correlation';
import {
  correlationRulesOf,
  defaultDetectionRules,
  defaultVersion,
  detectionRulesSchema,
  detectorRulesOf,
  historyOf,
  inForce,
  rulesOfIncidents,
  widestWindowMs,
  type DetectionRules,
  type VersionedRules,
} from '../../core/detection-rules';
import { defaultRateRules } from '../../core/detection/rules';
import { defaultDetectorRules, metricThresholdSignals, trafficVolumeSignals } from '../../core/detectors';
import { zodIssueDetails } from '../../core/errors';
import { roleAllows, roles } from '../../core/roles';
import type { MetricRow, SignalRow } from '../../core/telemetry';

const t0 = Date.UTC(2024, 0, 1);

function signal(over: Partial<SignalRow> & { ts: number }): SignalRow {
  return {
    org_id: 'org1', event_id: `evt_${over.ts}`, received_at: over.ts, telemetry: 'bgp', service: 'edge', environment: 'prod',
    region: 'eu', asn: 0, src_ip: '', dst_ip: '', dst_port: 0, bytes: 0, latency_ms: 0, rule: '', ...over,
  };
}

function metric(over: Partial<MetricRow> & { metric: string; value: number }): MetricRow {
  return { org_id: 'org1', event_id: `evt_${over.metric}_${over.value}`, ts: t0, received_at: t0, service: 'api', environment: 'prod', region: 'eu', ...over };
}

const rules = (body: object): DetectionRules => detectionRulesSchema.parse(body);
const versioned = (version: number, body: object): VersionedRules => ({ version, rules: rules(body), created_at: t0 + version, actor: 'key_x' });

/** The validation details the API answers with. */
function problems(body: unknown) {
  const result = detectionRulesSchema.safeParse(body);
  return result.success ? [] : zodIssueDetails(result.error);
}

describe('detection rules: the schema', () => {
  test('an empty body is the defaults, which are the built-in values of the engine and the detectors', () => {
    expect(rules({})).toEqual(defaultDetectionRules);
    expect(correlationRulesOf(defaultVersion)).toEqual({ ...defaultRules, version: 0 });
    const detectors = detectorRulesOf(defaultVersion);
    expect(detectors.bytesPerMinute).toBe(defaultDetectorRules.bytesPerMinute);
    expect(JSON.parse(JSON.stringify(detectors.metricThresholds))).toEqual(defaultDetectorRules.metricThresholds);
  });

  test('a field left out takes its default and metric_thresholds replaces the whole map', () => {
    expect(rules({ escalation_latency_ms: 250, metric_thresholds: { queue_depth: { at_least: 100 } } })).toEqual({
      ...defaultDetectionRules,
      escalation_latency_ms: 250,
      metric_thresholds: { queue_depth: { at_least: 100 } },
    });
  });

  test('the rate rules take their defaults when left out, as a version stored before they existed reads back', () => {
    const older: Partial<DetectionRules> = { ...defaultDetectionRules };
    delete older.rates;
    expect(rules(JSON.parse(JSON.stringify(older)) as object).rates).toEqual(defaultRateRules);
  });

  test('rate rules are checked with the rest: a bad threshold, address or prefix length is refused with its path', () => {
    const details = problems({ rates: { thresholds: { udp: { bps: 0 } }, host_groups: [{ name: 'a b', prefixes: ['10.0.0.0/8'], thresholds: {} }], carpet: { min_addresses: 1 } } });
    expect(details.map((d) => d.path).sort()).toEqual(['rates.carpet.min_addresses', 'rates.host_groups.0.name', 'rates.thresholds.udp.bps']);
  });

  test('out-of-range values are refused with the path of each', () => {
    const details = problems({ correlation_window_seconds: 5, escalation_distinct_kinds: 5, traffic_bytes_per_minute: 0, escalation_latency_ms: 1.5 });
    expect(details.map((d) => d.path).sort()).toEqual(['correlation_window_seconds', 'escalation_distinct_kinds', 'escalation_latency_ms', 'traffic_bytes_per_minute']);
  });

  test('a metric bound needs at_least or at_most, and at_most below at_least', () => {
    expect(problems({ metric_thresholds: { cpu: {} } })).toEqual([expect.objectContaining({ path: 'metric_thresholds.cpu' })]);
    expect(problems({ metric_thresholds: { cpu: { at_least: 0.5, at_most: 0.9 } } })).toEqual([
      expect.objectContaining({ path: 'metric_thresholds.cpu', message: expect.stringContaining('at_most must be below') as unknown }),
    ]);
    expect(problems({ metric_thresholds: { cpu: { above: 1 } } })[0]?.path).toBe('metric_thresholds.cpu');
    expect(rules({ metric_thresholds: { throughput: { at_most: 10, at_least: 1000 } } }).metric_thresholds.throughput).toEqual({ at_most: 10, at_least: 1000 });
  });

  test('unknown fields, padded or unusable metric names and bad exporter addresses are refused', () => {
    expect(problems({ window: 300 })[0]?.path).toBe('(root)');
    expect(problems({ metric_thresholds: { ' cpu': { at_least: 1 } } })[0]?.path).toBe('metric_thresholds. cpu');
    expect(problems({ traffic_bytes_per_minute_by_exporter: { 'not-an-ip': 5 } })[0]?.path).toBe('traffic_bytes_per_minute_by_exporter.not-an-ip');
  });

  test('exporter addresses are normalized, so two spellings of one exporter collide', () => {
    expect(rules({ traffic_bytes_per_minute_by_exporter: { '::ffff:192.0.2.1': 10, '2001:DB8::1': 20 } }).traffic_bytes_per_minute_by_exporter).toEqual({
      '192.0.2.1': 10,
      '2001:db8::1': 20,
    });
    expect(problems({ traffic_bytes_per_minute_by_exporter: { '192.0.2.1': 10, '::ffff:192.0.2.1': 20 } })).toHaveLength(1);
  });
});

describe('detection rules: the engine takes them as input', () => {
  const signals = [signal({ ts: t0, latency_ms: 400 }), signal({ ts: t0 + 8 * 60_000, latency_ms: 10 })];

  test('two rule sets give different incidents from the same signals', () => {
    const defaults = correlate(signals, [], correlationRulesOf(defaultVersion));
    const custom = correlate(signals, [], correlationRulesOf(versioned(3, { correlation_window_seconds: 600, escalation_latency_ms: 300 })));
    expect(defaults.map((i) => [i.severity, i.signal_count, i.rules_version])).toEqual([['high', 1, 0], ['high', 1, 0]]);
    expect(custom.map((i) => [i.severity, i.signal_count, i.rules_version, i.escalations])).toEqual([['critical', 2, 3, ['latency_ms >= 300']]]);
  });

  test('a recorded incident keeps the version it opened under; a new one takes the rules in force', () => {
    const history = historyOf([versioned(1, { escalation_latency_ms: 300 })]);
    const [first] = correlate([signals[0]!], [], correlationRulesOf(defaultVersion));
    const later = signal({ ts: t0 + 60 * 60_000, latency_ms: 400 });
    const both = correlate([...signals, later], [], rulesOfIncidents(history, [first!]));
    expect(both.map((i) => [i.id === first!.id, i.rules_version, i.severity])).toEqual([
      [true, 0, 'high'],
      [false, 1, 'high'],
      [false, 1, 'critical'],
    ]);
  });

  test('an incident whose id is not recorded takes the version of the recorded incident whose span holds its first signal', () => {
    const history = historyOf([versioned(1, { correlation_window_seconds: 60 }), versioned(2, {})]);
    const ofIncident = rulesOfIncidents(history, [{ id: 'inc_a', first_seen: t0, last_seen: t0 + 1000, rules_version: 1 }], history.versions[2]);
    expect(ofIncident('inc_other', t0 + 500).version).toBe(1);
    expect(ofIncident('inc_other', t0 + 5000).version).toBe(2);
  });

  test('the widest window of any version bounds how far back a run of signals reaches', () => {
    const history = historyOf([versioned(2, { correlation_window_seconds: 60 }), versioned(1, { correlation_window_seconds: 3600 })]);
    expect(history.versions.map((v) => v.version)).toEqual([0, 1, 2]);
    expect(inForce(history).version).toBe(2);
    expect(widestWindowMs(history)).toBe(3_600_000);
  });
});

describe('detection rules: the detectors', () => {
  test('any metric may have a bound, above or below; a metric without one never fires', () => {
    const d = detectorRulesOf(versioned(1, { metric_thresholds: { queue_depth: { at_least: 100 }, throughput: { at_most: 10 } } }));
    const fired = metricThresholdSignals(
      [metric({ metric: 'queue_depth', value: 100 }), metric({ metric: 'throughput', value: 3 }), metric({ metric: 'throughput', value: 11 }),
        metric({ metric: 'cpu_utilization', value: 0.99 }), metric({ metric: 'constructor', value: 1e9 })],
      d,
    );
    expect(fired.map((s) => s.rule)).toEqual(['metric_threshold:queue_depth>=100', 'metric_threshold:throughput<=10']);
  });

  test('an exporter threshold judges that exporter flows alone, as a signal of its own on the destination key', () => {
    const d = detectorRulesOf(versioned(1, { traffic_bytes_per_minute: 5000, traffic_bytes_per_minute_by_exporter: { '192.0.2.1': 100 } }));
    const minute = { org_id: 'org1', dst_ip: '10.0.0.9', minute: t0 };
    const fired = trafficVolumeSignals(
      [{ ...minute, bytes: 5000 }, { ...minute, bytes: 150, exporter: '192.0.2.1' }, { ...minute, bytes: 150, exporter: '192.0.2.2' }],
      d,
    );
    expect(fired.map((s) => [s.service, s.environment, s.rule])).toEqual([
      ['10.0.0.9', 'network', 'traffic_volume>=5000B/min'],
      ['10.0.0.9', 'network', 'traffic_volume[exporter=192.0.2.1]>=100B/min'],
    ]);
    expect(new Set(fired.map((s) => s.event_id)).size).toBe(2);
  });
});

describe('detection rules: who may change them', () => {
  test('only admin and operator manage detection rules', () => {
    expect(roles.filter((r) => roleAllows(r, 'rules:manage'))).toEqual(['admin', 'operator']);
  });
});

describe('detection rules: the per-process cache', () => {
  function fixture() {
    let now = 0;
    let stored: VersionedRules[] = [];
    let reads = 0;
    const repo = { versions: () => ((reads += 1), Promise.resolve(stored)) };
    const cache = new DetectionRulesCache({ ttlMs: 2000, maxWorkspaces: 2 }, { repo, now: () => now });
    return { cache, tick: (ms: number) => (now += ms), set: (v: VersionedRules[]) => (stored = v), reads: () => reads };
  }

  test('a workspace is read once per TTL; a change elsewhere applies after it', async () => {
    const f = fixture();
    expect(inForce(await f.cache.history('org1')).version).toBe(0);
    f.set([versioned(1, {})]);
    expect(inForce(await f.cache.history('org1')).version).toBe(0);
    f.tick(2000);
    expect(inForce(await f.cache.history('org1')).version).toBe(1);
    expect(f.reads()).toBe(2);
  });

  test('a version the caller needs and the copy lacks is read at once; one remembered applies at once', async () => {
    const f = fixture();
    await f.cache.history('org1');
    f.set([versioned(1, {})]);
    expect(inForce(await f.cache.history('org1', 1)).version).toBe(1);
    f.cache.remember('org1', [versioned(1, {}), versioned(2, {})]);
    expect(inForce(await f.cache.history('org1')).version).toBe(2);
    expect(f.reads()).toBe(2);
  });

  test('it keeps at most maxWorkspaces workspaces', async () => {
    const f = fixture();
    for (const org of ['a', 'b', 'c', 'a']) await f.cache.history(org);
    expect(f.reads()).toBe(4);
  });
});
