import type { AuditEntryView, ErrorBody, Page, PolicyView } from '../support/api-types';
import { startTestStack, transports, type TestStack } from '../support/test-stack';

/** `expect.stringMatching(pattern)`, typed as what it is to the compiler: a value to compare with. */
const stringMatching = (pattern: RegExp): unknown => expect.stringMatching(pattern);

describe.each(transports)('policies on %s', (transport) => {
  let t: TestStack;
  beforeAll(async () => {
    t = await startTestStack(transport, { ROLES: 'api' });
  });
  afterAll(async () => {
    await t.stop();
  });

  test('a created policy is active and its answer carries both policy_id and id', async () => {
    const { key } = await t.mintKey({ role: 'operator' });
    const res = await t.request<PolicyView>('POST', '/v1/policies', { key, body: { name: 'prod gate', requires_approval: true } });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      policy_id: stringMatching(/^pol_[0-9a-f]{20}$/),
      status: 'active',
      requires_approval: true,
      allow_execution: true,
      approval_timeout_minutes: 60,
    });
    expect(res.body.id).toBe(res.body.policy_id);
  });

  test('boundaries are validated: an unknown severity or field is 400 naming it', async () => {
    const { key } = await t.mintKey({ role: 'operator' });
    const bad = await t.request<ErrorBody>('POST', '/v1/policies', { key, body: { name: 'x', requires_approval: false, severities: ['low'] } });
    expect(bad.status).toBe(400);
    expect(bad.body.error.details?.[0]?.path).toBe('severities.0');
    const unknown = await t.request('POST', '/v1/policies', { key, body: { name: 'x', requires_approval: false, colour: 'red' } });
    expect(unknown.status).toBe(400);
  });

  test('PATCH changes a policy and raises its version; GET shows the change', async () => {
    const { key } = await t.mintKey({ role: 'operator' });
    const id = (await t.request<PolicyView>('POST', '/v1/policies', { key, body: { name: 'p', requires_approval: false } })).body.id;
    const patched = await t.request<PolicyView>('PATCH', `/v1/policies/${id}`, { key, body: { environments: ['staging'], max_window_minutes: 120 } });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({ environments: ['staging'], max_window_minutes: 120, version: 2 });
    const got = await t.request<PolicyView>('GET', `/v1/policies/${id}`, { key });
    expect(got.body).toMatchObject({ environments: ['staging'], version: 2 });
    const cleared = await t.request<PolicyView>('PATCH', `/v1/policies/${id}`, { key, body: { max_window_minutes: null } });
    expect(cleared.body).toMatchObject({ max_window_minutes: null, environments: ['staging'], version: 3 });
  });

  test('mitigation bounds read 0 and [] when unset, round-trip through POST, PATCH and GET, and null removes a limit', async () => {
    const { key } = await t.mintKey({ role: 'operator' });
    const plain = await t.request<PolicyView>('POST', '/v1/policies', { key, body: { name: 'p', requires_approval: false } });
    expect(plain.body).toMatchObject({ allowed_actions: [], max_duration_minutes: 0, max_active_mitigations: 0, min_prefix_length_v4: 0, min_prefix_length_v6: 0 });
    const bounds = { allowed_actions: ['blackhole', 'flowspec_rate_limit'], max_duration_minutes: 120, max_active_mitigations: 20, min_prefix_length_v4: 24, min_prefix_length_v6: 48 };
    const id = (await t.request<PolicyView>('POST', '/v1/policies', { key, body: { name: 'bounded', requires_approval: false, ...bounds } })).body.id;
    expect((await t.request<PolicyView>('GET', `/v1/policies/${id}`, { key })).body).toMatchObject(bounds);
    const change = { allowed_actions: ['flowspec_discard'], max_duration_minutes: null, min_prefix_length_v6: 64 };
    const patched = await t.request<PolicyView>('PATCH', `/v1/policies/${id}`, { key, body: change });
    expect(patched.body).toMatchObject({ ...bounds, ...change, max_duration_minutes: 0, version: 2 });
    expect((await t.request<PolicyView>('GET', `/v1/policies/${id}`, { key })).body).toEqual(patched.body);
    const audit = (await t.request<Page<AuditEntryView>>('GET', '/v1/audit', { key })).body.data[0];
    expect(audit).toMatchObject({ action: 'policy.update', target: id, details: change });
  });

  test('a bad mitigation bound is 400 naming the field', async () => {
    const { key } = await t.mintKey({ role: 'operator' });
    const bad = {
      allowed_actions: ['blackhole', 'blackhole'], max_duration_minutes: 10_081, max_active_mitigations: 0, min_prefix_length_v4: 33, min_prefix_length_v6: 129,
    };
    const refused = await t.request<ErrorBody>('POST', '/v1/policies', { key, body: { name: 'x', requires_approval: false, ...bad } });
    expect(refused.status).toBe(400);
    expect(refused.body.error.details?.map((d) => d.path).sort()).toEqual(Object.keys(bad).sort());
    const id = (await t.request<PolicyView>('POST', '/v1/policies', { key, body: { name: 'p', requires_approval: false } })).body.id;
    const patched = await t.request<ErrorBody>('PATCH', `/v1/policies/${id}`, { key, body: { allowed_actions: ['announce'] } });
    expect(patched.status).toBe(400);
    expect(patched.body.error.details?.map((d) => d.path)).toEqual(['allowed_actions.0']);
  });

  test('DELETE makes a policy inactive and keeps it listed with its history in the audit ledger', async () => {
    const { key } = await t.mintKey({ role: 'operator' });
    const id = (await t.request<PolicyView>('POST', '/v1/policies', { key, body: { name: 'p', requires_approval: false } })).body.id;
    const deleted = await t.request<PolicyView>('DELETE', `/v1/policies/${id}`, { key });
    expect(deleted.body).toMatchObject({ id, status: 'inactive' });
    expect((await t.request<Page<PolicyView>>('GET', '/v1/policies?status=inactive', { key })).body.data.map((p: { id: string }) => p.id)).toEqual([id]);
    expect((await t.request<Page<PolicyView>>('GET', '/v1/policies?status=active', { key })).body.data).toEqual([]);
    expect((await t.request('DELETE', `/v1/policies/${id}`, { key })).status).toBe(409);
    const actions = (await t.request<Page<AuditEntryView>>('GET', '/v1/audit', { key })).body.data.map((e: { action: string }) => e.action);
    expect(actions.slice(0, 2)).toEqual(['policy.deactivate', 'policy.create']);
  });

  test('an analyst may read policies but not create them', async () => {
    const operator = await t.mintKey({ role: 'operator' });
    const analyst = await t.mintKey({ role: 'analyst', orgId: operator.org_id });
    await t.request('POST', '/v1/policies', { key: operator.key, body: { name: 'p', requires_approval: false } });
    expect((await t.request<Page<PolicyView>>('GET', '/v1/policies', { key: analyst.key })).body.data).toHaveLength(1);
    expect((await t.request('POST', '/v1/policies', { key: analyst.key, body: { name: 'q', requires_approval: false } })).status).toBe(403);
  });

  test('another workspace policy is 404 to read, change or delete', async () => {
    const a = await t.mintKey({ role: 'operator' });
    const b = await t.mintKey({ role: 'operator' });
    const id = (await t.request<PolicyView>('POST', '/v1/policies', { key: a.key, body: { name: 'p', requires_approval: false } })).body.id;
    expect((await t.request('GET', `/v1/policies/${id}`, { key: b.key })).status).toBe(404);
    expect((await t.request('PATCH', `/v1/policies/${id}`, { key: b.key, body: { name: 'x' } })).status).toBe(404);
    expect((await t.request('DELETE', `/v1/policies/${id}`, { key: b.key })).status).toBe(404);
    expect((await t.request<Page<PolicyView>>('GET', '/v1/policies', { key: b.key })).body.data).toEqual([]);
  });
});
