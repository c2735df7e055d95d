import { randomBytes } from 'node:crypto';
import type { DataOf, ErrorBody, FlowView, IncidentView, Page, PolicyView, ReplayRequested, TopTalkerRow } from '../support/api-types';
import { startTestStack, type TestStack } from '../support/test-stack';
import { waitFor, waitForTelemetryDrained } from '../support/wait';

/**
 * Defects once found in the API, each held by the behaviour the client
 * sees: protocol filters that ignored case, ids of an unexpected form that
 * were 400 instead of 404, and metrics that labelled unknown paths with the
 * router's pattern or counted a retried batch as accepted twice.
 */
/** `expect.any(String)`, typed as what it is to the compiler: a value to compare with. */
const anyString = (): unknown => expect.any(String);
const errorBody = (code: string) => ({ error: { code, message: anyString() } });
const hex20 = () => randomBytes(10).toString('hex');

/** The summed value of a metric's samples whose labels include `labels`, from the Prometheus text. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number {
  let total = 0;
  for (const line of text.split('\n')) {
    const match = /^(\w+)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match || match[1] !== name) continue;
    const got: Record<string, string> = {};
    for (const m of (match[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) got[m[1]!] = m[2]!;
    if (Object.entries(labels).every(([k, v]) => got[k] === v)) total += Number(match[3]);
  }
  return total;
}

/** Every value a label takes in a metric's samples. */
function labelValues(text: string, name: string, label: string): string[] {
  const values = new Set<string>();
  for (const m of text.matchAll(new RegExp(`^${name}\\{[^}]*\\b${label}="((?:[^"\\\\]|\\\\.)*)"`, 'gm'))) values.add(m[1]!);
  return [...values];
}

interface IdRoute {
  method: string;
  template: string;
  kind: 'incident' | 'policy' | 'replay' | 'key';
  body?: unknown;
}

const idRoutes: IdRoute[] = [
  { method: 'GET', template: '/v1/incidents/:id', kind: 'incident' },
  { method: 'POST', template: '/v1/incidents/:id/acknowledge', kind: 'incident' },
  { method: 'POST', template: '/v1/incidents/:id/resolve', kind: 'incident' },
  { method: 'GET', template: '/v1/policies/:id', kind: 'policy' },
  { method: 'PATCH', template: '/v1/policies/:id', kind: 'policy', body: { name: 'renamed' } },
  { method: 'DELETE', template: '/v1/policies/:id', kind: 'policy' },
  { method: 'GET', template: '/v1/replays/:id', kind: 'replay' },
  { method: 'POST', template: '/v1/replays/:id/approve', kind: 'replay', body: {} },
  { method: 'POST', template: '/v1/replays/:id/deny', kind: 'replay', body: { comment: 'no' } },
  { method: 'DELETE', template: '/v1/api-keys/:id', kind: 'key' },
];
const prefixOf = { incident: 'inc', policy: 'pol', replay: 'rep', key: 'key' } as const;
const otherPrefixOf = { incident: 'pol', policy: 'rep', replay: 'inc', key: 'org' } as const;

/** Ids the caller's workspace does not have, in every form: absent, another workspace's, malformed. */
function unknownIds(kind: IdRoute['kind'], theirs: string): Array<[form: string, id: string]> {
  const prefix = prefixOf[kind];
  return [
    ['well-formed but absent', `${prefix}_${hex20()}`],
    ["another workspace's real id", theirs],
    ['a wrong prefix', `${otherPrefixOf[kind]}_${hex20()}`],
    ['upper case', `${prefix}_${hex20()}`.toUpperCase()],
    ['garbage', 'x'],
    ['a very long string', `${prefix}_${'f'.repeat(4000)}`],
    ['non-ASCII', `${prefix}_💥`],
    ['quotes', `${prefix}_' OR '1'='1`],
  ];
}

const signal = { telemetry: 'flow', service: 'checkout', environment: 'prod', region: 'eu-west-1', src_ip: '10.0.0.1', dst_ip: '10.0.0.2', latency_ms: 250 };

describe('API defects on chdb', () => {
  let t: TestStack;
  const drained = () => waitForTelemetryDrained(t.stack.nats.jsm, t.stack.config.nats.prefix);
  const metricsText = async () => (await t.request('GET', '/metrics', { key: t.adminKey })).text;
  beforeAll(async () => {
    t = await startTestStack('chdb', { WORKER_MAX_WAIT_MS: '20' });
  });
  afterAll(async () => {
    await t.stop();
  });

  describe('protocol filters', () => {
    let key: string;
    const flows = [
      { src_ip: '192.0.2.10', dst_ip: '198.51.100.1', bytes: 1000, packets: 10, protocol: 'tcp' },
      { src_ip: '192.0.2.11', dst_ip: '198.51.100.2', bytes: 3000, packets: 30, protocol: 'tcp' },
      { src_ip: '192.0.2.12', dst_ip: '198.51.100.3', bytes: 500, packets: 5, protocol: 'udp' },
    ];
    beforeAll(async () => {
      key = (await t.mintKey({ role: 'operator' })).key;
      const posted = await t.request('POST', '/flow', { key, raw: flows.map((f) => JSON.stringify(f)).join('\n'), contentType: 'application/x-ndjson' });
      expect(posted.status).toBe(201);
      await drained();
    });

    test('GET /v1/telemetry/flows?protocol=TCP finds the flows posted as tcp', async () => {
      const res = await t.request<Page<FlowView>>('GET', '/v1/telemetry/flows?protocol=TCP', { key });
      expect(res.status).toBe(200);
      const found = res.body.data.map((f) => [f.src_ip, f.protocol]).sort();
      expect(found).toEqual([
        ['192.0.2.10', 'tcp'],
        ['192.0.2.11', 'tcp'],
      ]);
    });

    test('the top talkers by protocol agree with the flows the protocol filter finds', async () => {
      const top = await t.request<DataOf<TopTalkerRow<'protocol', 'bytes'>>>('GET', '/v1/telemetry/flows/top?by=protocol', { key });
      expect(top.status).toBe(200);
      for (const protocol of ['TCP', 'udp']) {
        const listed = (await t.request<Page<FlowView>>('GET', `/v1/telemetry/flows?protocol=${protocol}`, { key })).body.data;
        const talker = top.body.data.find((r) => r.protocol === protocol.toLowerCase());
        expect(talker).toEqual({ protocol: protocol.toLowerCase(), bytes: listed.reduce((n, f) => n + f.bytes, 0), flows: listed.length });
      }
    });
  });

  describe('unknown ids', () => {
    let caller: string;
    /** Deciding takes an approver (admin does not approve): one of the caller's workspace. */
    let approverCaller: string;
    const callerOf = (route: IdRoute) => (/\/(approve|deny)$/.test(route.template) ? approverCaller : caller);
    const theirs = {} as Record<IdRoute['kind'], string>;
    beforeAll(async () => {
      const owner = await t.mintKey({ role: 'admin' });
      await t.request('POST', '/ingest', { key: owner.key, body: signal });
      const incidents = () => t.request<Page<IncidentView>>('GET', '/v1/incidents', { key: owner.key });
      theirs.incident = (await waitFor(async () => (await incidents()).body.data[0], 10_000, 'the incident')).id;
      const replay = await t.request<ReplayRequested>('POST', '/v1/replay', { key: owner.key, body: { incident_id: theirs.incident } });
      expect(replay.status).toBe(202);
      theirs.replay = replay.body.replay_id;
      const policy = await t.request<PolicyView>('POST', '/v1/policies', { key: owner.key, body: { name: 'theirs', requires_approval: false } });
      expect(policy.status).toBe(201);
      theirs.policy = policy.body.id;
      theirs.key = owner.key_id;
      const admin = await t.mintKey({ role: 'admin' });
      caller = admin.key;
      approverCaller = (await t.mintKey({ role: 'approver', orgId: admin.org_id })).key;
    });

    test.each(idRoutes.map((r) => [`${r.method} ${r.template}`, r] as const))(
      '%s answers 404 NOT_FOUND with the error body for an id the workspace does not have, whatever its form',
      async (_name, route) => {
        const answers = [];
        for (const [form, id] of unknownIds(route.kind, theirs[route.kind])) {
          const res = await t.request<unknown>(route.method, route.template.replace(':id', encodeURIComponent(id)), { key: callerOf(route), body: route.body });
          answers.push({ form, status: res.status, body: res.body });
        }
        expect(answers).toEqual(unknownIds(route.kind, '').map(([form]) => ({ form, status: 404, body: errorBody('NOT_FOUND') })));
      },
    );

    test('POST /v1/replay answers 404 NOT_FOUND for an incident_id the workspace does not have, whatever its form', async () => {
      const answers = [];
      for (const [form, id] of [...unknownIds('incident', theirs.incident), ['empty', ''] as [string, string]]) {
        const res = await t.request<unknown>('POST', '/v1/replay', { key: caller, body: { incident_id: id } });
        answers.push({ form, status: res.status, body: res.body });
      }
      const forms = [...unknownIds('incident', '').map(([form]) => form), 'empty'];
      expect(answers).toEqual(forms.map((form) => ({ form, status: 404, body: errorBody('NOT_FOUND') })));
    });

    test('POST /v1/replay answers 400 VALIDATION_ERROR naming incident_id when it is missing or not a string', async () => {
      const bodies = [{}, { incident_id: 42 }, { incident_id: null }, { incident_id: true }, { incident_id: [theirs.incident] }, { incident_id: { id: 'x' } }];
      const answers = [];
      for (const body of bodies) {
        const res = await t.request<ErrorBody>('POST', '/v1/replay', { key: caller, body });
        answers.push({ body, status: res.status, code: res.body.error.code, paths: res.body.error.details?.map((d) => d.path) });
      }
      expect(answers).toEqual(bodies.map((body) => ({ body, status: 400, code: 'VALIDATION_ERROR', paths: ['incident_id'] })));
    });
  });

  describe('metrics', () => {
    let key: string;
    beforeAll(async () => {
      key = (await t.mintKey({ role: 'operator' })).key;
    });

    test('a request to an unknown path is counted under the route label unmatched', async () => {
      const before = sample(await metricsText(), 'nettel_http_requests_total', { route: 'unmatched', status: '404' });
      const unknown = `/v1/no-such-path-${hex20()}`;
      for (const path of [unknown, `${unknown}/deeper`, '/v1/incidents/x/y/z']) {
        expect((await t.request('GET', path, { key })).status).toBe(404);
      }
      expect((await t.request('POST', unknown)).status).toBe(404);
      const after = sample(await metricsText(), 'nettel_http_requests_total', { route: 'unmatched', status: '404' });
      expect(after - before).toBe(4);
    });

    test('every route label is a route of the API or unmatched, never a pattern or a raw path', async () => {
      await t.request('GET', `/v1/(.*)/${hex20()}`, { key });
      await t.request('GET', '/', { key });
      const text = await metricsText();
      const allowed = new Set([...t.stack.routes!.map((r) => r.path), 'unmatched']);
      const labels = [
        ...labelValues(text, 'nettel_http_requests_total', 'route'),
        ...labelValues(text, 'nettel_http_request_duration_seconds_count', 'route'),
      ];
      expect(labels).toContain('unmatched');
      expect(labels.filter((l) => !allowed.has(l))).toEqual([]);
    });

    test('a retried Idempotency-Key batch counts as duplicate records, not as accepted', async () => {
      const body = [1, 2, 3].map((i) => ({ ...signal, dst_ip: `203.0.113.${i}` }));
      const headers = { 'idempotency-key': `retry-${hex20()}` };
      const kind = { kind: 'signal' };
      const before = await metricsText();
      const first = await t.request<{ event_ids: string[] }>('POST', '/ingest', { key, body, headers });
      const retry = await t.request<{ event_ids: string[] }>('POST', '/ingest', { key, body, headers });
      expect([first.status, retry.status]).toEqual([202, 202]);
      expect(retry.body.event_ids).toEqual(first.body.event_ids);
      const after = await metricsText();
      expect(sample(after, 'nettel_telemetry_accepted_total', kind) - sample(before, 'nettel_telemetry_accepted_total', kind)).toBe(3);
      expect(sample(after, 'nettel_telemetry_duplicate_records_total', kind) - sample(before, 'nettel_telemetry_duplicate_records_total', kind)).toBe(3);
    });

    test('the HTTP and publisher metrics move under a small load', async () => {
      const before = await metricsText();
      const posts = Array.from({ length: 40 }, (_, i) => t.request('POST', '/ingest', { key, body: { ...signal, dst_port: 1000 + i } }));
      const reads = Array.from({ length: 20 }, () => t.request('GET', '/v1/incidents', { key }));
      const answers = await Promise.all([...posts, ...reads]);
      expect(answers.map((r) => r.status)).toEqual([...Array.from({ length: 40 }, () => 202), ...Array.from({ length: 20 }, () => 200)]);
      const after = await metricsText();
      const delta = (name: string, labels: Record<string, string>) => sample(after, name, labels) - sample(before, name, labels);
      expect(delta('nettel_http_requests_total', { method: 'POST', route: '/ingest', status: '202' })).toBe(40);
      expect(delta('nettel_http_requests_total', { method: 'GET', route: '/v1/incidents', status: '200' })).toBe(20);
      expect(delta('nettel_http_request_duration_seconds_count', { route: '/ingest' })).toBe(40);
      expect(delta('nettel_http_request_duration_seconds_sum', { route: '/ingest' })).toBeGreaterThan(0);
      expect(delta('nettel_telemetry_accepted_total', { kind: 'signal' })).toBe(40);
      expect(delta('nettel_telemetry_duplicate_records_total', { kind: 'signal' })).toBe(0);
    });
  });
});
