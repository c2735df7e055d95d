import { randomInt } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { routerPath } from '../../api/contracts/contract';
import { localGobgpServer } from '../../engines/gobgp';
import { freePort, type LocalProcess } from '../../engines/local-process';
import { createLogger } from '../../observability/logger';
import { loadConfig } from '../../service/config';
import { sessionCookieName, setCookies, signInThroughConsole } from '../support/console-sign-in';
import { startTestOidcProvider, type TestOidcProvider } from '../support/oidc-provider';
import { analystCalls, enrichmentCalls, networkCalls, type ContractCall as Call } from '../support/contract-enrichment';
import { callGuardrailRoutes } from '../support/contract-guardrails';
import { ContractChecker, type OpenApiDoc } from '../support/openapi-check';
import { startTestStack, type TestStack } from '../support/test-stack';
import { waitFor } from '../support/wait';

/**
 * Every route of the OpenAPI document, called with a valid input and an invalid one on a real stack; every
 * answer must match the document for its status. The stack runs the temporal-worker role too, so that replays
 * and automation runs reach `awaiting_approval` and the decisions are called for real, with a gobgpd (no
 * neighbour) as the speaker runs announce to, and single sign-on at the tests' OpenID provider for the console.
 */
const noRefusal = ['GET /healthz', 'GET /v1/openapi.json', 'GET /docs', 'GET /docs/init.js', 'GET /v1/console-config', 'GET /auth/config'];
const noSuccess: string[] = [];

describe('the API against its OpenAPI document', () => {
  let t: TestStack;
  let check: ContractChecker;
  let key: string;
  let gobgpd: LocalProcess;
  let provider: TestOidcProvider;
  const ids: Record<string, string> = {};
  const speakerDir = fs.mkdtempSync(path.join(os.tmpdir(), 'contract-gobgpd-'));

  beforeAll(async () => {
    const config = loadConfig(process.env);
    const [bgpPort, apiPort, port] = await Promise.all([freePort(), freePort(), freePort()]);
    const users = [{ subject: 'u-contract', name: 'Carla Contract', email: 'carla@example.org', groups: ['contract-people'] }];
    provider = await startTestOidcProvider({ users, redirectUris: [`http://127.0.0.1:${port}/auth/callback`] });
    const sso = { PORT: String(port), OIDC_ISSUER_URL: provider.issuer, OIDC_CLIENT_ID: provider.clientId, OIDC_CLIENT_SECRET: provider.clientSecret, OIDC_REDIRECT_BASE_URL: `http://127.0.0.1:${port}` };
    gobgpd = localGobgpServer({ dir: speakerDir, bgpPort, apiPort, asn: 65010, routerId: '127.0.0.1', binPath: config.binPath, toolsDir: config.toolsDir }, createLogger('silent'));
    await gobgpd.start();
    t = await startTestStack('chdb', { ROLES: 'api,stream-workers,temporal-worker', WEBHOOK_ALLOWED_HOSTS: '127.0.0.1', BGP_SPEAKER_ADDRESS: `127.0.0.1:${apiPort}`, ...sso });
    const doc = await t.request<OpenApiDoc>('GET', '/v1/openapi.json');
    check = new ContractChecker(doc.body);
    ({ key, org_id: ids.org } = await t.mintKey({ role: 'operator' }));
  }, 120_000);
  afterAll(async () => {
    await t?.stop();
    await Promise.all([gobgpd?.stop(), provider?.stop()]);
    fs.rmSync(speakerDir, { recursive: true, force: true });
  });

  /** Calls a route (path in the document's form, ids filled in) and returns the answer's problems. */
  async function call(method: string, path: string, opts: Call = {}) {
    const real = path.replace(/\{(\w+)\}/g, (_, name: string) => opts.fill?.[name] ?? ids[name] ?? 'none') + (opts.query ?? '');
    const res = await t.request(method, real, opts);
    return { res, problems: check.problems(method, path, res) };
  }

  /** A valid call expected to succeed with `status`, then refused calls: no key (authenticated routes) and each bad input. */
  async function both(method: string, path: string, ok: Call & { status: number }, ...bad: Call[]) {
    const problems: string[] = [];
    const good = await call(method, path, { key, ...ok });
    problems.push(...(good.res.status === ok.status ? [] : [`${method} ${path} answered ${good.res.status}, not ${ok.status}: ${good.res.text.slice(0, 300)}`]), ...good.problems);
    for (const b of bad) {
      const refused = await call(method, path, { key, ...b });
      problems.push(...(refused.res.status >= 400 ? [] : [`${method} ${path} accepted an invalid input (${JSON.stringify(b).slice(0, 200)})`]), ...refused.problems);
    }
    expect(problems).toEqual([]);
    return good.res;
  }
  const noKey = { key: '' };

  test('the public routes answer as documented', async () => {
    for (const path of ['/healthz', '/v1/openapi.json', '/docs', '/docs/init.js', '/v1/console-config']) {
      await both('GET', path, { status: 200 });
    }
    await both('GET', '/metrics', { key: t.adminKey, status: 200 }, noKey, { key });
    await both('GET', '/docs/assets/{file}', { status: 200, fill: { file: 'swagger-ui.css' } }, { fill: { file: 'package.json' } });
    await both('GET', '/v1/whoami', { status: 200 }, noKey);
    expect(await (await fetch(String((await t.request<OpenApiDoc>('GET', '/v1/openapi.json')).body.components.securitySchemes?.openId?.openIdConnectUrl))).json()).toMatchObject({ issuer: provider.issuer });
  });

  test('keys and the audit ledger answer as documented', async () => {
    const admin = t.adminKey;
    const minted = await both('POST', '/v1/api-keys', { key: admin, body: { role: 'analyst', name: 'contract' }, status: 201 }, noKey, { key: admin, body: { colour: 'red' } });
    ids.id = (minted.body as { key_id: string }).key_id;
    await both('GET', '/v1/api-keys', { key: admin, status: 200 }, noKey, { key: admin, query: '?limit=0' });
    await both('DELETE', '/v1/api-keys/{id}', { key: admin, status: 200 }, { key: admin }, { key: admin, fill: { id: 'key_unknown' } });
    await both('GET', '/v1/audit', { status: 200 }, noKey, { query: '?limit=x' });
    await both('GET', '/v1/audit/verify', { status: 200 }, noKey, { query: '?colour=red' });
  });

  test('ingestion answers as documented', async () => {
    const flow = { src_ip: '10.0.0.1', dst_ip: '10.0.0.2', bytes: 1200, packets: 3, protocol: 'tcp', dst_port: 443 };
    await both('POST', '/flow', { body: flow, status: 201 }, noKey, { body: { ...flow, src_ip: '10.0.0.300' } }, { raw: 'x', contentType: 'text/csv' });
    const signal = { telemetry: 'bgp', service: 'edge', environment: 'prod', region: 'us-east-1', latency_ms: 40 };
    await both('POST', '/ingest', { body: signal, status: 202 }, noKey, { body: [] }, { body: { ...signal, colour: 1 } });
    const metric = JSON.stringify({ service: 'edge', metric: 'latency_ms', value: 120, region: 'us-east-1' });
    await both('POST', '/v1/ingest/events', { raw: `${metric}\n${metric}\n`, contentType: 'application/x-ndjson', status: 202 }, noKey, { raw: '{"value":', contentType: 'application/json' });
  });

  test('incidents answer as documented', async () => {
    const incident = await waitFor(async () => {
      const res = await t.request<{ data: Array<{ id: string }> }>('GET', '/v1/incidents?service=edge', { key });
      return res.body.data[0];
    }, 30_000, 'an incident');
    ids.id = incident.id;
    await both('GET', '/v1/incidents', { query: '?state=open', status: 200 }, noKey, { query: '?state=closed' });
    await both('GET', '/v1/incidents/{id}', { status: 200 }, noKey, { fill: { id: 'inc_unknown' } });
    await both('GET', '/v1/incidents/{id}/signals', { query: '?limit=1', status: 200 }, noKey, { query: '?limit=0' }, { fill: { id: 'inc_unknown' } });
    await both('POST', '/v1/incidents/{id}/acknowledge', { status: 200 }, noKey, {});
    ids.incident = incident.id;
  });

  /** A policy that requires approval makes replays wait; an approver key decides each (the requesting key may not). */
  async function decisions() {
    const { key: approver } = await t.mintKey({ role: 'approver', orgId: ids.org });
    const policy = await t.request<{ id: string }>('POST', '/v1/policies', { key, body: { name: 'gate', requires_approval: true } });
    for (const decision of ['approve', 'deny']) {
      const replay = await t.request<{ replay_id: string }>('POST', '/v1/replay', { key, body: { incident_id: ids.incident } });
      const id = replay.body.replay_id;
      await waitFor(async () => ((await t.request<{ status: string }>('GET', `/v1/replays/${id}`, { key })).body.status === 'awaiting_approval' ? true : undefined), 30_000, 'awaiting_approval');
      await both('POST', `/v1/replays/{id}/${decision}`, { key: approver, fill: { id }, body: { comment: 'contract' }, status: 202 }, noKey, { fill: { id } }, { key: approver, fill: { id: 'rep_unknown' } }, { key: approver, fill: { id }, body: { colour: 1 } });
    }
    await t.request('DELETE', `/v1/policies/${policy.body.id}`, { key });
  }

  test('replays answer as documented', async () => {
    const accepted = await both('POST', '/v1/replay', { body: { incident_id: ids.incident }, status: 202 }, noKey, { body: { incident_id: 5 } }, { body: { incident_id: 'inc_unknown' } });
    ids.id = (accepted.body as { replay_id: string }).replay_id;
    await both('GET', '/v1/replays', { status: 200 }, noKey, { query: '?status=lost' });
    await both('GET', '/v1/approvals', { status: 200 }, noKey, { query: '?limit=1001' });
    await both('GET', '/v1/replays/{id}', { status: 200 }, noKey, { fill: { id: 'rep_unknown' } });
    // No policy asks for approval yet: the replay completes, and its parity report is documented too.
    await waitFor(async () => ((await t.request<{ status: string }>('GET', `/v1/replays/${ids.id}`, { key })).body.status === 'completed' ? true : undefined), 30_000, 'a completed replay');
    expect((await call('GET', '/v1/replays/{id}', { key })).problems).toEqual([]);
    await decisions();
    await both('POST', '/v1/incidents/{id}/resolve', { fill: { id: ids.incident ?? '' }, status: 200 }, noKey, { fill: { id: ids.incident ?? '' } });
  });

  test('analyst queries answer as documented', async () => {
    await both('GET', '/v1/telemetry/flows', { query: '?dst_ip=10.0.0.0/8', status: 200 }, noKey, { query: '?src_ip=10.0.0.300' });
    await both('GET', '/v1/telemetry/flows/top', { query: '?by=src_ip,dst_ip&totals=all', status: 200 }, noKey, { query: '?metric=bits' });
    await both('GET', '/v1/telemetry/flows/series', { query: '?step=60&split_by=protocol', status: 200 }, noKey, { query: '?step=61' });
    await both('GET', '/v1/telemetry/metrics/series', { query: '?service=edge&metric=latency_ms', status: 200 }, noKey, { query: '?metric=latency_ms' });
    // The posted flow has no exporter: a key by exporter holds null.
    const byExporter = await call('GET', '/v1/telemetry/flows/top', { key, query: '?by=exporter' });
    expect(byExporter.res.body).toMatchObject({ data: [expect.objectContaining({ exporter: null })] });
    expect(byExporter.problems).toEqual([]);
    expect((await call('GET', '/v1/telemetry/flows/series', { key, query: '?step=60&split_by=exporter' })).problems).toEqual([]);
    await analystCalls(both);
  });

  /** Create, list, get, patch, delete, each with its refusals (a second delete is 409). */
  async function crud(base: string, create: unknown, badCreate: unknown, patch: unknown, prefix: string) {
    const created = await both('POST', base, { body: create, status: 201 }, noKey, { body: badCreate });
    ids.id = (created.body as { id: string }).id;
    await both('GET', base, { status: 200 }, noKey, { query: '?limit=0' });
    await both('GET', `${base}/{id}`, { status: 200 }, noKey, { fill: { id: `${prefix}_unknown` } });
    await both('PATCH', `${base}/{id}`, { body: patch, status: 200 }, noKey, { body: {} });
    return created;
  }
  const deleteTwice = (base: string) => both('DELETE', `${base}/{id}`, { status: 200 }, noKey, {});

  test('policies answer as documented', async () => {
    await crud('/v1/policies', { name: 'contract', requires_approval: false }, { name: 'x', requires_approval: 'yes' }, { max_window_minutes: 60 }, 'pol');
    await deleteTwice('/v1/policies');
  });

  test('exporters, their SNMP agents and interfaces, and the classification rules answer as documented', async () => {
    const address = `198.18.${randomInt(256)}.${randomInt(1, 255)}`;
    await crud('/v1/exporters', { address, name: 'contract' }, { address: 'not-an-address' }, { sampling_rate: 100 }, 'exp');
    await deleteTwice('/v1/exporters');
    await both('GET', '/v1/exporters/unknown', { key: t.adminKey, status: 200 }, noKey, {}, { key: t.adminKey, query: '?limit=0' });
    // The platform admin's queue and decisions: a workspace key is 403, a decided or unknown exporter 409 or 404.
    await both('GET', '/v1/exporters/pending', { key: t.adminKey, status: 200 }, noKey, {}, { key: t.adminKey, query: '?limit=0' });
    for (const decision of ['approve', 'reject']) {
      const id = (await t.request<{ id: string }>('POST', '/v1/exporters', { key, body: { address: `198.19.${randomInt(256)}.${randomInt(1, 255)}` } })).body.id;
      const admin = { key: t.adminKey, fill: { id } };
      await both('POST', `/v1/exporters/{id}/${decision}`, { ...admin, status: 200 }, noKey, { fill: { id } }, admin, { ...admin, fill: { id: 'exp_unknown' } });
    }
    await enrichmentCalls(both, t, key).then(() => networkCalls(both));
  });

  test('prefixes answer as documented', async () => {
    const { key: admin } = await t.mintKey({ role: 'admin', orgId: ids.org });
    const declare = (third: number) => ({ prefix: `100.${64 + randomInt(64)}.${third}.0/24` });
    const created = await both('POST', '/v1/prefixes', { key: admin, body: declare(0), status: 201 }, noKey, { key: admin, body: { prefix: '10.0.0.1/8' } }, { body: declare(1) });
    ids.id = (created.body as { id: string }).id;
    await both('GET', '/v1/prefixes', { status: 200 }, noKey, { query: '?status=active' });
    await both('GET', '/v1/prefixes/{id}', { status: 200 }, noKey, { fill: { id: 'pfx_unknown' } });
    await both('DELETE', '/v1/prefixes/{id}', { key: admin, status: 200 }, noKey, { key: admin });
    await both('GET', '/v1/prefixes/pending', { key: t.adminKey, status: 200 }, noKey, {}, { key: t.adminKey, query: '?limit=0' });
    for (const [i, decision] of ['approve', 'reject'].entries()) {
      const id = (await t.request<{ id: string }>('POST', '/v1/prefixes', { key: admin, body: declare(2 + i) })).body.id;
      const platform = { key: t.adminKey, fill: { id } };
      await both('POST', `/v1/prefixes/{id}/${decision}`, { ...platform, status: 200 }, noKey, { fill: { id } }, platform, { ...platform, fill: { id: 'pfx_unknown' } });
      if (decision === 'approve') await both('POST', '/v1/prefixes/{id}/revoke', { ...platform, status: 200 }, noKey, { fill: { id } }, platform, { ...platform, fill: { id: 'pfx_unknown' } });
    }
  });

  test('detection rules answer as documented', async () => {
    await both('GET', '/v1/detection-rules', { status: 200 }, noKey, { query: '?colour=red' });
    await both('PUT', '/v1/detection-rules', { body: { correlation_window_seconds: 600 }, status: 200 }, noKey, { body: { correlation_window_seconds: 1 } });
    await both('GET', '/v1/detection-rules/versions/{version}', { fill: { version: '1' }, status: 200 }, noKey, { fill: { version: '99' } }, { fill: { version: 'x' } });
  });

  test('playbooks answer as documented', async () => {
    const playbooks = [{ id: 'contract', name: 'contract', actions: [{ type: 'flowspec_discard', duration_minutes: 5, protocols: ['tcp'] }, { type: 'webhook' }] }];
    await both('GET', '/v1/playbooks', { status: 200 }, noKey, { query: '?colour=red' });
    await both('PUT', '/v1/playbooks', { body: { playbooks }, status: 200 }, noKey, { body: { playbooks: [{ id: 'x', name: 'x', actions: [] }] } });
    await both('GET', '/v1/playbooks/versions/{version}', { fill: { version: '1' }, status: 200 }, noKey, { fill: { version: '99' } }, { fill: { version: 'x' } });
  });

  test('guardrails answer as documented', () => callGuardrailRoutes(t, both, ids.org!));
  test('automation runs and mitigations answer as documented', async () => {
    const { key: admin } = await t.mintKey({ role: 'admin', orgId: ids.org });
    const { key: approver } = await t.mintKey({ role: 'approver', orgId: ids.org });
    const third = randomInt(256);
    const prefix = (await t.request<{ id: string }>('POST', '/v1/prefixes', { key: admin, body: { prefix: `198.18.${third}.0/24` } })).body.id;
    expect((await t.request('POST', `/v1/prefixes/${prefix}/approve`, { key: t.adminKey })).status).toBe(200);
    const policy = (await t.request<{ id: string }>('POST', '/v1/policies', { key, body: { name: 'automation contract', requires_approval: true } })).body.id;
    const services = [`198.18.${third}.7`, `198.18.${third}.8`];
    const current = (await t.request<{ version: number; playbooks: unknown[] }>('GET', '/v1/playbooks', { key })).body;
    const playbook = { id: 'automation-contract', name: 'contract', match: { services }, actions: [{ type: 'blackhole', duration_minutes: 5 }] };
    expect((await t.request('PUT', '/v1/playbooks', { key, body: { version: current.version, playbooks: [...current.playbooks, playbook] } })).status).toBe(200);
    const waiting: string[] = [];
    for (const service of services) {
      await t.request('POST', '/ingest', { key, body: { telemetry: 'bgp', service, environment: 'prod', region: 'contract', asn: 64500, latency_ms: 1 } });
      waiting.push(await waitFor(async () => {
        const page = (await t.request<{ data: Array<{ automation_id: string; status: string; actions: Array<{ destination: string | null }> }> }>('GET', '/v1/automations?status=awaiting_approval', { key })).body;
        return page.data.find((a) => a.actions[0]?.destination === `${service}/32`)?.automation_id;
      }, 30_000, `a run for ${service} awaiting approval`));
    }
    const [approved, denied] = waiting as [string, string];
    await both('GET', '/v1/automations', { status: 200 }, noKey, { query: '?status=lost' });
    await both('GET', '/v1/automations/{id}', { fill: { id: approved }, status: 200 }, noKey, { fill: { id: 'aut_unknown' } });
    await both('POST', '/v1/automations/{id}/approve', { key: approver, fill: { id: approved }, body: { comment: 'contract' }, status: 202 }, noKey, { key: approver, fill: { id: approved }, body: { colour: 1 } });
    await both('POST', '/v1/automations/{id}/deny', { key: approver, fill: { id: denied }, status: 202 }, noKey, { key: approver, fill: { id: denied } });
    await waitFor(async () => ((await t.request<{ status: string }>('GET', `/v1/automations/${approved}`, { key })).body.status === 'active' ? true : undefined), 30_000, 'the approved run active');
    await both('GET', '/v1/mitigations', { status: 200 }, noKey, { query: '?colour=red' });
    await both('GET', '/v1/mitigations/all', { key: t.adminKey, status: 200 }, noKey, {}, { key: t.adminKey, query: '?colour=red' });
    await both('POST', '/v1/automations/{id}/extend', { key: approver, fill: { id: approved }, body: { minutes: 5 }, status: 200 }, noKey, { key: approver, fill: { id: approved }, body: { minutes: 0 } });
    await both('POST', '/v1/automations/{id}/withdraw', { key: approver, fill: { id: approved }, status: 200 }, noKey, { key: approver, fill: { id: approved } });
    await t.request('DELETE', `/v1/policies/${policy}`, { key });
  });

  test('webhooks answer as documented', async () => {
    const create = { url: 'http://127.0.0.1:9/hook', events: ['incident.opened'] };
    await crud('/v1/webhooks', create, { ...create, events: ['nothing.happened'] }, { description: 'contract' }, 'whk');
    await both('POST', '/v1/webhooks/{id}/test', { status: 202 }, noKey, { fill: { id: 'whk_unknown' } });
    await both('GET', '/v1/webhooks/{id}/deliveries', { status: 200 }, noKey, { query: '?limit=0' });
    await deleteTwice('/v1/webhooks');
  });

  test('single sign-on answers as documented', async () => {
    const { key: admin } = await t.mintKey({ role: 'admin', orgId: ids.org });
    const mapping = { version: 0, mappings: [{ group: 'netops', roles: ['operator'] }] };
    await both('GET', '/v1/sso/group-mappings', { key: admin, status: 200 }, noKey, { key: admin, query: '?colour=red' }, {});
    // A stale version is 409; a role that does not exist is 400.
    await both('PUT', '/v1/sso/group-mappings', { key: admin, body: mapping, status: 200 }, noKey, { key: admin, body: mapping }, { key: admin, body: { version: 1, mappings: [{ group: 'x', roles: ['root'] }] } });
    await both('GET', '/v1/sso/group-mappings/versions', { key: admin, status: 200 }, noKey, { key: admin, query: '?limit=1' });
    const platform = { key: t.adminKey, fill: { org_id: ids.org! } };
    await both('GET', '/v1/workspaces/{org_id}/sso', { ...platform, status: 200 }, noKey, { fill: platform.fill }, { ...platform, fill: { org_id: 'no such org!' } });
    await both('PUT', '/v1/workspaces/{org_id}/sso', { ...platform, body: { required: false }, status: 200 }, noKey, { fill: platform.fill, body: { required: true } }, { ...platform, body: { required: 'yes' } });
  });

  test("the console's sign-in answers as documented", async () => {
    const { key: admin, org_id: org } = await t.mintKey({ role: 'admin' });
    await t.request('PUT', '/v1/sso/group-mappings', { key: admin, body: { version: 0, mappings: [{ group: 'contract-people', roles: ['operator'] }] } });
    await both('GET', '/auth/config', { status: 200 });
    // Redirects are checked as they come, not followed.
    const redirect = async (path: string, res: Response) => check.problems('GET', path, { status: res.status, headers: res.headers, text: await res.text(), body: undefined });
    expect(await redirect('/auth/login', await fetch(`${t.url}/auth/login`, { redirect: 'manual' }))).toEqual([]);
    await both('GET', '/auth/login', { status: 400, query: '?colour=red' });
    const { callback, session } = await signInThroughConsole(t.url, provider.issuer, 'u-contract');
    expect([callback.status, ...(await redirect('/auth/callback', callback))]).toEqual([303]);
    await both('GET', '/auth/callback', { query: '?code=x&state=y', status: 400 }, { query: '?colour=red' });
    const origin = { origin: t.url };
    const opened = await both('POST', '/auth/key-session', { key: '', headers: origin, body: { key: admin }, status: 201 }, { key: '', headers: origin, body: { key: 'nope' } }, { key: '', body: { key: admin } });
    const keyCookie = { cookie: `${sessionCookieName}=${setCookies(opened).get(sessionCookieName)!.value}` };
    const csrf = (opened.body as { csrf_token: string }).csrf_token;
    await both('GET', '/auth/session', { key: '', headers: { cookie: `${sessionCookieName}=${session!}` }, status: 200 }, noKey);
    const asKeySession = { key: '', headers: { ...keyCookie, ...origin, 'x-csrf-token': csrf } };
    await both('POST', '/auth/workspace', { ...asKeySession, body: { org_id: org }, status: 200 }, { key: '', headers: { ...keyCookie, ...origin }, body: { org_id: org } }, { ...asKeySession, body: { org_id: 'elsewhere' } });
    await both('POST', '/auth/logout', { ...asKeySession, status: 200 }, { key: '', headers: keyCookie }, noKey);
  });

  test('every route of the app is in the document, and every operation was called', () => {
    const operations = check.operations();
    const documented = new Set(operations.map((o) => routerPath(o)));
    expect((t.stack.routes ?? []).map((r) => `${r.method} ${r.path}`).filter((r) => !documented.has(r))).toEqual([]);
    expect(operations.filter((o) => !noSuccess.includes(o) && !check.succeeded.has(o))).toEqual([]);
    expect(operations.filter((o) => !noRefusal.includes(o) && !check.refused.has(o))).toEqual([]);
  });
});
