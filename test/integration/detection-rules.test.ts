import type { AuditEntryView, ErrorBody, IncidentView, Page, ReplayRequested, ReplayView } from '../support/api-types';
import { defaultRateRules } from '../../core/detection/rules';
import { startTestStack, transports, type TestStack } from '../support/test-stack';
import { waitFor, waitForTelemetryDrained } from '../support/wait';

type Incident = IncidentView & { rules_version: number };
interface RulesView {
  version: number;
  rules: Record<string, unknown>;
  updated_at: string | null;
  updated_by: string | null;
}

const signal = { telemetry: 'bgp', environment: 'prod', region: 'eu-west-1', latency_ms: 400 };
const queueDepth = (value: number) => ({ service: 'queue', metric: 'queue_depth', value, region: 'eu-west-1', environment: 'prod' });

describe.each(transports)('detection rules per workspace on %s', (transport) => {
  let t: TestStack;
  beforeAll(async () => {
    t = await startTestStack(transport, { ROLES: 'api,stream-workers,temporal-worker', WORKER_MAX_WAIT_MS: '20' });
  });
  afterAll(async () => {
    await t.stop();
  });

  const drained = () => waitForTelemetryDrained(t.stack.nats.jsm, t.stack.config.nats.prefix);
  const incidents = async (key: string) => (await t.request<Page<Incident>>('GET', '/v1/incidents?limit=100', { key })).body.data;
  const put = (key: string, body: unknown) => t.request<RulesView>('PUT', '/v1/detection-rules', { key, body });

  test('a workspace reads the defaults as version 0, sets the next version (audited), and reads any version back', async () => {
    const operator = await t.mintKey({ role: 'operator' });
    const analyst = await t.mintKey({ role: 'analyst', orgId: operator.org_id });
    const initial = await t.request<RulesView>('GET', '/v1/detection-rules', { key: analyst.key });
    expect(initial.status).toBe(200);
    expect(initial.body).toEqual({
      version: 0,
      updated_at: null,
      updated_by: null,
      rules: {
        correlation_window_seconds: 300,
        escalation_latency_ms: 1000,
        escalation_distinct_kinds: 3,
        metric_thresholds: {
          latency_ms: { at_least: 1000 },
          error_rate: { at_least: 0.05 },
          packet_loss: { at_least: 0.02 },
          cpu_utilization: { at_least: 0.95 },
        },
        traffic_bytes_per_minute: 1_000_000_000,
        traffic_bytes_per_minute_by_exporter: {},
        rates: defaultRateRules,
      },
    });

    const changed = await put(operator.key, { escalation_latency_ms: 300, traffic_bytes_per_minute_by_exporter: { '::ffff:192.0.2.7': 5000 } });
    expect(changed.status).toBe(200);
    expect(changed.body).toMatchObject({ version: 1, updated_by: operator.key_id, rules: { escalation_latency_ms: 300, traffic_bytes_per_minute_by_exporter: { '192.0.2.7': 5000 } } });
    expect((await put(operator.key, changed.body.rules)).body.version).toBe(1);
    expect((await t.request<RulesView>('GET', '/v1/detection-rules', { key: analyst.key })).body).toEqual(changed.body);
    expect((await t.request<RulesView>('GET', '/v1/detection-rules/versions/0', { key: analyst.key })).body).toEqual(initial.body);
    expect((await t.request('GET', '/v1/detection-rules/versions/2', { key: analyst.key })).status).toBe(404);

    const audit = await t.request<Page<AuditEntryView>>('GET', '/v1/audit', { key: operator.key });
    expect(audit.body.data.filter((e) => e.action === 'detection_rules.update').map((e) => e.target)).toEqual(['v1']);
  });

  test('the document GET answers is accepted back by PUT, its version guarding against a concurrent change (409 when stale)', async () => {
    const { key } = await t.mintKey({ role: 'operator' });
    const read = (await t.request<RulesView>('GET', '/v1/detection-rules', { key })).body;
    const edited = await put(key, { ...read, rules: { ...read.rules, correlation_window_seconds: 900 } });
    expect(edited.status).toBe(200);
    expect(edited.body).toMatchObject({ version: read.version + 1, rules: { correlation_window_seconds: 900 } });
    const stale = await t.request<ErrorBody>('PUT', '/v1/detection-rules', { key, body: { ...read, rules: { ...read.rules, correlation_window_seconds: 60 } } });
    expect(stale.status).toBe(409);
    expect(stale.body.error.code).toBe('CONFLICT');
    expect((await t.request<RulesView>('GET', '/v1/detection-rules', { key })).body.rules.correlation_window_seconds).toBe(900);
  });

  test('invalid rules are refused with 400 naming each path; an analyst may not change them', async () => {
    const operator = await t.mintKey({ role: 'operator' });
    const analyst = await t.mintKey({ role: 'analyst', orgId: operator.org_id });
    const bad = await t.request<ErrorBody>('PUT', '/v1/detection-rules', {
      key: operator.key,
      body: { correlation_window_seconds: 1, metric_thresholds: { cpu: { at_least: 0.5, at_most: 0.9 } }, extra: true },
    });
    expect(bad.status).toBe(400);
    expect(bad.body.error.code).toBe('VALIDATION_ERROR');
    expect(bad.body.error.details?.map((d) => d.path).sort()).toEqual(['(root)', 'correlation_window_seconds', 'metric_thresholds.cpu']);
    expect((await put(analyst.key, {})).status).toBe(403);
    expect((await t.request<RulesView>('GET', '/v1/detection-rules', { key: operator.key })).body.version).toBe(0);
  });

  test('the rate rules are set with the rest (versioned and audited), and bad ones are refused with 400 naming each path', async () => {
    const operator = await t.mintKey({ role: 'operator' });
    const rates = {
      thresholds: { tcp_syn: { pps: 5000 } },
      host_groups: [{ name: 'web', prefixes: ['198.51.100.0/24', '2001:db8:1::/48'], thresholds: { total: { pps: 50_000 } } }],
      whitelist: { sources: ['192.0.2.53'], destinations: ['2001:db8::/64'] },
    };
    const set = await put(operator.key, { rates });
    expect(set.status).toBe(200);
    expect(set.body).toMatchObject({ version: 1, rules: { rates: { ...rates, carpet: defaultRateRules.carpet } } });
    const bad = await t.request<ErrorBody>('PUT', '/v1/detection-rules', {
      key: operator.key,
      body: { rates: { thresholds: { tcp_syn: { pps: -1 } }, whitelist: { sources: ['not-an-address'] }, carpet: { ipv4_prefix_length: 40 } } },
    });
    expect(bad.status).toBe(400);
    expect(bad.body.error.details?.map((d) => d.path).sort()).toEqual(['rates.carpet.ipv4_prefix_length', 'rates.thresholds.tcp_syn.pps', 'rates.whitelist.sources.0']);
    expect((await t.request<RulesView>('GET', '/v1/detection-rules', { key: operator.key })).body.version).toBe(1);
    const audit = await t.request<Page<AuditEntryView>>('GET', '/v1/audit', { key: operator.key });
    expect(audit.body.data.filter((e) => e.action === 'detection_rules.update').map((e) => e.target)).toEqual(['v1']);
  });

  test('two workspaces with different thresholds get different incidents from the same data', async () => {
    const strict = await t.mintKey({ role: 'operator' });
    const lenient = await t.mintKey({ role: 'operator' });
    expect((await put(strict.key, { escalation_latency_ms: 300, metric_thresholds: { queue_depth: { at_least: 100 } } })).status).toBe(200);
    for (const { key } of [strict, lenient]) {
      expect((await t.request('POST', '/v1/ingest/events', { key, body: queueDepth(150) })).status).toBe(202);
      expect((await t.request('POST', '/ingest', { key, body: { ...signal, service: 'edge' } })).status).toBe(202);
    }
    await drained();
    const ofStrict = await waitFor(async () => ((await incidents(strict.key)).length === 2 ? incidents(strict.key) : undefined));
    expect(ofStrict.map((i) => [i.service, i.rule, i.severity, i.rules_version]).sort()).toEqual([
      ['edge', 'signal', 'critical', 1],
      ['queue', 'metric_threshold:queue_depth>=100', 'high', 1],
    ]);
    expect((await incidents(lenient.key)).map((i) => [i.service, i.rule, i.severity, i.rules_version])).toEqual([['edge', 'signal', 'high', 0]]);
  });

  test('changing a rule affects new data only: an open incident keeps its version, a new one takes the new rules', async () => {
    const { key } = await t.mintKey({ role: 'operator' });
    const start = Date.now() - 10 * 60_000;
    await t.request('POST', '/ingest', { key, body: { ...signal, service: 'old', timestamp: start } });
    await drained();
    const before = await waitFor(async () => (await incidents(key))[0]);
    expect(before).toMatchObject({ severity: 'high', rules_version: 0 });

    expect((await put(key, { escalation_latency_ms: 300 })).body.version).toBe(1);
    await t.request('POST', '/ingest', { key, body: [{ ...signal, service: 'old', timestamp: start + 60_000 }, { ...signal, service: 'new', timestamp: start + 60_000 }] });
    await drained();
    const after = await waitFor(async () => {
      const all = await incidents(key);
      return all.length === 2 && all.some((i) => i.service === 'old' && i.signal_count === 2) ? all : undefined;
    });
    expect(after.find((i) => i.service === 'old')).toMatchObject({ id: before.id, severity: 'high', signal_count: 2, rules_version: 0 });
    expect(after.find((i) => i.service === 'new')).toMatchObject({ severity: 'critical', escalations: ['latency_ms >= 300'], rules_version: 1 });
  });

  test('a replay of an incident computed under an older rules version re-runs that version and reports parity true', async () => {
    const { key } = await t.mintKey({ role: 'operator' });
    await put(key, { metric_thresholds: { queue_depth: { at_least: 100 } } });
    await t.request('POST', '/v1/ingest/events', { key, body: [queueDepth(150), queueDepth(180)] });
    await drained();
    const incident = await waitFor(async () => (await incidents(key))[0]);
    expect(incident).toMatchObject({ rule: 'metric_threshold:queue_depth>=100', signal_count: 2, rules_version: 1 });

    // Under the rules now in force the same history would open no incident at all.
    expect((await put(key, { correlation_window_seconds: 60, metric_thresholds: { queue_depth: { at_least: 1000 } } })).body.version).toBe(2);
    const requested = await t.request<ReplayRequested>('POST', '/v1/replay', { key, body: { incident_id: incident.id } });
    expect(requested.status).toBe(202);
    const done = await waitFor(async () => {
      const r = await t.request<ReplayView>('GET', `/v1/replays/${requested.body.replay_id}`, { key });
      return r.body.status === 'completed' || r.body.status === 'failed' ? r.body : undefined;
    }, 30_000, 'the replay to end');
    expect(done.status).toBe('completed');
    // The window follows version 1 (300 s each side), not the 60 s in force now.
    expect(done.window_minutes).toBeGreaterThanOrEqual(10);
    expect(done.report).toMatchObject({ parity: true, differences: [], replayed: { id: incident.id, signal_count: 2, rule: 'metric_threshold:queue_depth>=100' } });
  });
});
