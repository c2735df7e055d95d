import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { Registry } from 'prom-client';
import { createApp } from '../../api/app';
import { AuditLedger } from '../../application/audit-ledger';
import { KeysService } from '../../application/keys-service';
import { createLogger } from '../../observability/logger';
import { apiRole } from '../../service/roles/api';
import { AuditRepo } from '../../storage/audit-repo';
import { KeysRepo } from '../../storage/keys-repo';
import { AuditHeads } from '../../streams/audit-heads';
import type { AuditEntryView, ErrorBody, KeyView, MintedKeyView, Page } from '../support/api-types';
import { startTestStack, transports, type TestStack } from '../support/test-stack';

/** `expect.any(String)` and `expect.stringContaining(text)`, typed as what they are to the compiler: values to compare with. */
const anyString = (): unknown => expect.any(String);
const stringContaining = (text: string): unknown => expect.stringContaining(text);

/**
 * A second API process on the test stack's engines whose key service and
 * audit ledger read `now` instead of the wall clock: the stack's own process
 * has no clock to inject, and a test should not wait for time to pass.
 */
async function apiWithClock(t: TestStack, now: () => number) {
  const { config, clickhouse, nats } = t.stack;
  const registry = new Registry();
  const heads = new AuditHeads(nats, config.nats.prefix, config.nats.replicas);
  await heads.start();
  const audit = new AuditLedger(new AuditRepo(clickhouse), heads, registry, t.stack.config.audit.chainKey, now);
  const keys = new KeysService({ repo: new KeysRepo(clickhouse), audit, registry, adminApiKey: t.adminKey, now });
  const { deps } = apiRole(config, { ...t.stack.adapters, registry, log: createLogger('silent') }, []);
  const server = http.createServer(createApp({ ...deps, audit, keys }).app.callback());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const request = async <T>(method: string, route: string, opts: { key: string; body?: unknown }) => {
    const headers: Record<string, string> = { authorization: `Bearer ${opts.key}` };
    if (opts.body !== undefined) headers['content-type'] = 'application/json';
    const res = await fetch(`${url}${route}`, { method, headers, body: opts.body === undefined ? undefined : JSON.stringify(opts.body) });
    const text = await res.text();
    return { status: res.status, body: (text ? JSON.parse(text) : undefined) as T };
  };
  const stop = () => {
    server.closeAllConnections();
    return new Promise<void>((resolve) => server.close(() => resolve()));
  };
  return { request, stop };
}

describe.each(transports)('API keys on %s', (transport) => {
  let t: TestStack;
  beforeAll(async () => {
    t = await startTestStack(transport);
  });
  afterAll(async () => {
    await t.stop();
  });

  test('a key minted by the admin with no body opens a new workspace and authenticates its calls', async () => {
    const minted = await t.request<MintedKeyView>('POST', '/v1/api-keys', { key: t.adminKey });
    expect(minted.status).toBe(201);
    expect(minted.body).toMatchObject({ scope: 'tenant', role: 'operator', expires_at: null, status: 'active' });
    expect(minted.body.key).toMatch(/^ntk_[0-9a-f]{20}_/);
    expect(minted.body.org_id).toMatch(/^org_/);
    const audit = await t.request<Page<AuditEntryView>>('GET', '/v1/audit', { key: minted.body.key });
    expect(audit.status).toBe(200);
    expect(audit.body.data[0]).toMatchObject({ action: 'api_key.create', target: minted.body.key_id, actor: 'platform-admin' });
  });

  test('a JSON null body to POST /v1/api-keys is a wrong request, not a missing one: 400 VALIDATION_ERROR', async () => {
    const refused = await t.request<ErrorBody>('POST', '/v1/api-keys', { key: t.adminKey, raw: 'null', contentType: 'application/json' });
    expect([refused.status, refused.body.error.code]).toEqual([400, 'VALIDATION_ERROR']);
  });

  test('a request without a key is 401 UNAUTHORIZED with the error body', async () => {
    const res = await t.request<ErrorBody>('GET', '/v1/audit');
    expect(res.status).toBe(401);
    expect(res.body).toEqual({ error: { code: 'UNAUTHORIZED', message: anyString() } });
    expect(res.headers.get('www-authenticate')).toBe('Bearer');
  });

  test('a well-formed key that was never minted is 401', async () => {
    const minted = await t.mintKey();
    const forged = minted.key.slice(0, -4) + (minted.key.endsWith('AAAA') ? 'BBBB' : 'AAAA');
    const res = await t.request<ErrorBody>('GET', '/v1/audit', { key: forged });
    expect(res.status).toBe(401);
    expect(res.body.error.code).toBe('UNAUTHORIZED');
  });

  test('an expired key is 401', async () => {
    const clock = { now: Date.now() };
    const api = await apiWithClock(t, () => clock.now);
    try {
      const minted = (await api.request<MintedKeyView>('POST', '/v1/api-keys', { key: t.adminKey, body: { expires_in_seconds: 1 } })).body;
      expect((await api.request('GET', '/v1/audit', { key: minted.key })).status).toBe(200);
      // The key's one second passes on the service's clock.
      clock.now += 1000;
      const res = await api.request<ErrorBody>('GET', '/v1/audit', { key: minted.key });
      expect(res.status).toBe(401);
      expect(res.body.error.code).toBe('UNAUTHORIZED');
    } finally {
      await api.stop();
    }
  });

  test('a revoked key is 401 right after its revocation', async () => {
    const admin = await t.mintKey({ role: 'admin' });
    const victim = await t.mintKey({ orgId: admin.org_id });
    expect((await t.request('GET', '/v1/audit', { key: victim.key })).status).toBe(200);
    const revoked = await t.request('DELETE', `/v1/api-keys/${victim.key_id}`, { key: admin.key });
    expect(revoked.status).toBe(200);
    expect(revoked.body).toMatchObject({ key_id: victim.key_id, status: 'revoked' });
    const res = await t.request('GET', '/v1/audit', { key: victim.key });
    expect(res.status).toBe(401);
  });

  test('revoking a key twice is 409 CONFLICT', async () => {
    const victim = await t.mintKey();
    expect((await t.request('DELETE', `/v1/api-keys/${victim.key_id}`, { key: t.adminKey })).status).toBe(200);
    const again = await t.request<ErrorBody>('DELETE', `/v1/api-keys/${victim.key_id}`, { key: t.adminKey });
    expect(again.status).toBe(409);
    expect(again.body.error.code).toBe('CONFLICT');
  });

  test('a role without the permission is 403 FORBIDDEN', async () => {
    const analyst = await t.mintKey({ role: 'analyst' });
    const res = await t.request<ErrorBody>('GET', '/v1/api-keys', { key: analyst.key });
    expect(res.status).toBe(403);
    expect(res.body).toEqual({ error: { code: 'FORBIDDEN', message: stringContaining('analyst') } });
  });

  test('a workspace admin cannot mint a key for another workspace', async () => {
    const admin = await t.mintKey({ role: 'admin' });
    const res = await t.request<ErrorBody>('POST', '/v1/api-keys', { key: admin.key, body: { org_id: 'org_someone_else' } });
    expect(res.status).toBe(403);
    expect(res.body.error.code).toBe('FORBIDDEN');
  });

  test("a key minted by a person's key is owned by that person, shown in the answer, the list and whoami", async () => {
    const alice = { subject: `alice-${transport}-${Date.now()}`, name: 'Alice', email: 'alice@example.net' };
    const admin = await t.mintKey({ role: 'admin', owner: alice });
    const minted = await t.request<MintedKeyView>('POST', '/v1/api-keys', { key: admin.key, body: { role: 'approver' } });
    expect([minted.status, minted.body.owner]).toEqual([201, alice]);
    const listed = await t.request<Page<KeyView>>('GET', '/v1/api-keys', { key: admin.key });
    expect(listed.body.data.find((k) => k.key_id === minted.body.key_id)?.owner).toEqual(alice);
    const whoami = await t.request<{ person: unknown; roles: string[] }>('GET', '/v1/whoami', { key: minted.body.key });
    expect(whoami.body).toMatchObject({ person: alice, roles: ['approver'] });
    const audit = await t.request<Page<AuditEntryView>>('GET', '/v1/audit', { key: admin.key });
    expect(audit.body.data.find((e) => e.target === minted.body.key_id)).toMatchObject({ action: 'api_key.create', actor: admin.key_id, actor_person: alice });
  });

  test("a person's key cannot mint a key owned by another person: 400", async () => {
    const admin = await t.mintKey({ role: 'admin' });
    const res = await t.request<ErrorBody>('POST', '/v1/api-keys', { key: admin.key, body: { role: 'approver', owner: { subject: 'someone-else' } } });
    expect([res.status, res.body.error.code]).toEqual([400, 'VALIDATION_ERROR']);
  });

  test('a service key minted by a person stands for nobody', async () => {
    const admin = await t.mintKey({ role: 'admin' });
    const minted = await t.request<MintedKeyView>('POST', '/v1/api-keys', { key: admin.key, body: { role: 'ingest', owner: 'service' } });
    expect(minted.body.owner).toBe('service');
    const whoami = await t.request<{ person: unknown }>('GET', '/v1/whoami', { key: minted.body.key });
    expect(whoami.body.person).toBeNull();
  });

  test('two workspaces see only their own keys, and another workspace key is 404 to revoke', async () => {
    const a = await t.mintKey({ role: 'admin' });
    const b = await t.mintKey({ role: 'admin' });
    const aOther = await t.mintKey({ orgId: a.org_id, role: 'analyst' });
    const listA = await t.request<Page<KeyView>>('GET', '/v1/api-keys', { key: a.key });
    expect(listA.body.data.map((k: { key_id: string }) => k.key_id).sort()).toEqual([a.key_id, aOther.key_id].sort());
    const listB = await t.request<Page<KeyView>>('GET', '/v1/api-keys', { key: b.key });
    expect(listB.body.data.map((k: { key_id: string }) => k.key_id)).toEqual([b.key_id]);
    const crossRevoke = await t.request<ErrorBody>('DELETE', `/v1/api-keys/${aOther.key_id}`, { key: b.key });
    expect(crossRevoke.status).toBe(404);
    expect(crossRevoke.body.error.code).toBe('NOT_FOUND');
  });

  test('the key list pages with a cursor and never shows secrets or hashes', async () => {
    const admin = await t.mintKey({ role: 'admin' });
    for (let i = 0; i < 4; i += 1) await t.mintKey({ orgId: admin.org_id, role: 'ingest' });
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const query: string = cursor ? `?limit=2&cursor=${cursor}` : '?limit=2';
      const page = await t.request<Page<KeyView>>('GET', `/v1/api-keys${query}`, { key: admin.key });
      expect(page.status).toBe(200);
      expect(page.body.data.length).toBeLessThanOrEqual(2);
      for (const k of page.body.data) {
        expect(k).not.toHaveProperty('key');
        expect(k).not.toHaveProperty('key_hash');
        seen.push(k.key_id);
      }
      cursor = page.body.next_cursor;
    } while (cursor);
    expect(new Set(seen).size).toBe(5);
  });

  test('key secrets never appear in clear in storage or logs', async () => {
    const minted = await t.mintKey();
    await t.request('GET', '/v1/audit', { key: minted.key });
    await t.request('GET', '/v1/api-keys', { key: minted.key });
    const secret = minted.key;
    // The random part after `ntk_<20 hex>_`; base64url may itself hold underscores.
    const randomPart = secret.slice('ntk_'.length + 20 + 1);
    expect(randomPart).toHaveLength(43);
    const db = t.stack.clickhouse.database;
    for (const table of ['api_keys', 'audit_log']) {
      const rows = await t.stack.clickhouse.query(`SELECT * FROM ${db}.${table}`);
      expect(JSON.stringify(rows)).not.toContain(secret);
      expect(JSON.stringify(rows)).not.toContain(randomPart);
    }
    expect(t.logs.join('')).not.toContain(secret);
    expect(t.logs.join('')).not.toContain(randomPart);
    for (const file of walk(t.dataDir)) {
      expect(fs.readFileSync(file).includes(randomPart)).toBe(false);
    }
  });

  test('a second start on the same data keeps every key', async () => {
    const minted = await t.mintKey();
    await t.restart();
    const res = await t.request('GET', '/v1/audit', { key: minted.key });
    expect(res.status).toBe(200);
  });
});

function* walk(dir: string): Generator<string> {
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) yield* walk(full);
    else if (entry.isFile()) yield full;
  }
}
