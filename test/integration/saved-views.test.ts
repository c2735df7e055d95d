import type { AuditEntryView, ErrorBody, Page } from '../support/api-types';
import { ContractChecker, type OpenApiDoc } from '../support/openapi-check';
import { startTestStack, transports, type ApiResponse, type MintedTestKey, type TestStack } from '../support/test-stack';

/**
 * Saved views of the visualize page (issue 34) on both generations: a
 * versioned document per view, shared by the workspace, written by those
 * with `views:manage`, read by every role with `read`, each change audited,
 * and no workspace seeing another's.
 */
interface SavedView {
  id: string;
  name: string;
  state: Record<string, unknown>;
  version: number;
  created_at: string;
  updated_at: string;
  created_by: string;
}

const state = {
  v: 1, filter: "dst_as = 13335 AND NOT src_country IN ('NL', 'DE')", dimensions: ['src_as', 'in_if_name', 'dst_as'], chart: 'sankey', unit: 'flows',
  range: { last_seconds: 86_400 }, previous: true, direction: 'in', limit: 10,
};

describe.each(transports)('saved views on %s', (transport) => {
  let t: TestStack;
  let analyst: MintedTestKey;
  let approver: MintedTestKey;
  let operator: MintedTestKey;
  let check: ContractChecker;
  const as = <T>(who: MintedTestKey, method: string, route: string, body?: unknown) => t.request<T>(method, route, { key: who.key, ...(body === undefined ? {} : { body }) });
  const checked = (method: string, path: string, res: ApiResponse) => expect(check.problems(method, path, res)).toEqual([]);
  const save = (name: string, over: Record<string, unknown> = {}) => as<SavedView>(analyst, 'POST', '/v1/views', { name, state: { ...state, ...over } });

  beforeAll(async () => {
    t = await startTestStack(transport);
    analyst = await t.mintKey({ role: 'analyst' });
    approver = await t.mintKey({ role: 'approver', orgId: analyst.org_id });
    operator = await t.mintKey({ role: 'operator', orgId: analyst.org_id });
    check = new ContractChecker((await t.request<OpenApiDoc>('GET', '/v1/openapi.json')).body);
  });
  afterAll(async () => {
    await t?.stop();
  });

  test('an analyst saves a view: version 1, its state as sent, created by its key, and the workspace reads it back', async () => {
    const created = await save('AS 13335 by interface');
    expect(created.status).toBe(201);
    checked('POST', '/v1/views', created);
    expect(created.body).toMatchObject({ name: 'AS 13335 by interface', state, version: 1, created_by: analyst.key_id });
    expect(created.body.id).toMatch(/^vw_[0-9a-f]{20}$/);
    const read = await as<SavedView>(approver, 'GET', `/v1/views/${created.body.id}`);
    expect([read.status, read.body]).toEqual([200, created.body]);
    checked('GET', '/v1/views/{id}', read);
  });

  test('a view left to its defaults is stored with them, so every release reads the same state', async () => {
    const created = await as<SavedView>(analyst, 'POST', '/v1/views', { name: 'defaults', state: { v: 1, chart: 'lines', range: { last_seconds: 3600 } } });
    expect(created.body.state).toEqual({ v: 1, filter: '', dimensions: [], chart: 'lines', unit: 'bytes', range: { last_seconds: 3600 }, previous: false, direction: 'both', bidirectional: false, limit: 10 });
  });

  test('a change names the version it edited: the next version keeps when the view was created, a stale version is 409', async () => {
    const created = (await save('to change')).body;
    const changed = await as<SavedView>(analyst, 'PUT', `/v1/views/${created.id}`, { name: 'changed', state: { ...state, chart: 'table' }, version: 1 });
    expect(changed.status).toBe(200);
    checked('PUT', '/v1/views/{id}', changed);
    expect(changed.body).toMatchObject({ id: created.id, name: 'changed', version: 2, created_at: created.created_at, created_by: analyst.key_id });
    expect(Date.parse(changed.body.updated_at)).toBeGreaterThanOrEqual(Date.parse(created.updated_at));
    const stale = await as<ErrorBody>(operator, 'PUT', `/v1/views/${created.id}`, { name: 'mine', state, version: 1 });
    expect([stale.status, stale.body.error.code]).toEqual([409, 'CONFLICT']);
    const same = await as<SavedView>(analyst, 'PUT', `/v1/views/${created.id}`, { name: 'changed', state: { ...state, chart: 'table' } });
    expect(same.body.version).toBe(2);
  });

  test('a deleted view is gone from the list and answers 404', async () => {
    const created = (await save('to delete')).body;
    const deleted = await as<SavedView>(analyst, 'DELETE', `/v1/views/${created.id}`);
    expect([deleted.status, deleted.body.version]).toEqual([200, 2]);
    checked('DELETE', '/v1/views/{id}', deleted);
    expect((await as<ErrorBody>(analyst, 'GET', `/v1/views/${created.id}`)).status).toBe(404);
    expect((await as<ErrorBody>(analyst, 'DELETE', `/v1/views/${created.id}`)).status).toBe(404);
    const list = await as<{ data: SavedView[] }>(analyst, 'GET', '/v1/views');
    checked('GET', '/v1/views', list);
    expect(list.body.data.map((v) => v.id)).not.toContain(created.id);
  });

  test('the list is every view of the workspace by name', async () => {
    await save('zz last');
    await save('aa first');
    const names = (await as<{ data: SavedView[] }>(approver, 'GET', '/v1/views')).body.data.map((v) => v.name);
    expect(names).toEqual([...names].sort((a, b) => a.localeCompare(b)));
    expect(names[0]).toBe('aa first');
  });

  test('a role without views:manage reads views but may not save, change or delete one', async () => {
    const created = (await save('read only')).body;
    expect((await as(approver, 'GET', `/v1/views/${created.id}`)).status).toBe(200);
    const refused = await as<ErrorBody>(approver, 'POST', '/v1/views', { name: 'no', state });
    expect([refused.status, refused.body.error.code]).toEqual([403, 'FORBIDDEN']);
    expect((await as(approver, 'PUT', `/v1/views/${created.id}`, { name: 'no', state })).status).toBe(403);
    expect((await as(approver, 'DELETE', `/v1/views/${created.id}`)).status).toBe(403);
  });

  test("another workspace neither lists nor opens nor changes a workspace's view", async () => {
    const created = (await save('private')).body;
    const stranger = await t.mintKey({ role: 'operator' });
    expect((await as<{ data: SavedView[] }>(stranger, 'GET', '/v1/views')).body.data).toEqual([]);
    expect((await as(stranger, 'GET', `/v1/views/${created.id}`)).status).toBe(404);
    expect((await as(stranger, 'PUT', `/v1/views/${created.id}`, { name: 'taken', state })).status).toBe(404);
    expect((await as(stranger, 'DELETE', `/v1/views/${created.id}`)).status).toBe(404);
    expect((await as<SavedView>(analyst, 'GET', `/v1/views/${created.id}`)).body.name).toBe('private');
  });

  test('a view whose filter would not run is 400 naming state.filter and the place', async () => {
    const res = await save('bad filter', { filter: 'dst_as = 13335 AND' });
    expect(res.status).toBe(400);
    expect(res.body as unknown as ErrorBody).toMatchObject({ error: { code: 'VALIDATION_ERROR', details: [{ path: 'state.filter', message: expect.stringContaining('1:19') as unknown }] } });
  });

  test('a state of another version, an unknown dimension or an unknown field is 400 naming it', async () => {
    const paths = async (body: unknown) => ((await as<ErrorBody>(analyst, 'POST', '/v1/views', body)).body.error.details ?? []).map((d) => d.path);
    expect(await paths({ name: 'v2', state: { ...state, v: 2 } })).toEqual(['state.v']);
    expect(await paths({ name: 'dim', state: { ...state, dimensions: ['nonsense'] } })).toEqual(['state.dimensions.0']);
    expect(await paths({ name: 'extra', state: { ...state, colour: 'red' } })).toEqual(['state']);
    expect(await paths({ name: '', state })).toEqual(['name']);
  });

  test('creating, changing and deleting a view are audit entries naming the view', async () => {
    const created = (await save('audited')).body;
    await as(analyst, 'PUT', `/v1/views/${created.id}`, { name: 'audited 2', state });
    await as(analyst, 'DELETE', `/v1/views/${created.id}`);
    const ledger = await as<Page<AuditEntryView>>(operator, 'GET', '/v1/audit?limit=1000');
    const entries = ledger.body.data.filter((e) => (e.details as { view_id?: string }).view_id === created.id);
    expect(entries.map((e) => [e.action, e.actor, (e.details as { name: string }).name]).sort()).toEqual([
      ['view.create', analyst.key_id, 'audited'],
      ['view.delete', analyst.key_id, 'audited 2'],
      ['view.update', analyst.key_id, 'audited 2'],
    ]);
  });
});
