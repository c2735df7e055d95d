import type { AuditEntryView, ErrorBody, Page } from '../support/api-types';
import { startTestStack, transports, type TestStack } from '../support/test-stack';

interface MappingsView {
  version: number;
  mappings: { group: string; roles: string[] }[];
  updated_at: string | null;
  updated_by: string | null;
}

describe.each(transports)('single sign-on group mappings on %s', (transport) => {
  let t: TestStack;
  beforeAll(async () => {
    t = await startTestStack(transport);
  });
  afterAll(async () => {
    await t.stop();
  });

  const get = (key: string) => t.request<MappingsView>('GET', '/v1/sso/group-mappings', { key });
  const put = (key: string, body: unknown) => t.request<MappingsView & ErrorBody>('PUT', '/v1/sso/group-mappings', { key, body });
  const netops = [{ group: 'netops', roles: ['operator'] }];

  test('a workspace admin reads version 0 with no group mapped, sets the next version, and reads the history newest first', async () => {
    const admin = await t.mintKey({ role: 'admin' });
    expect((await get(admin.key)).body).toEqual({ version: 0, mappings: [], updated_at: null, updated_by: null });
    const written = await put(admin.key, { version: 0, mappings: [...netops, { group: 'leads', roles: ['approver', 'analyst'] }] });
    expect(written.status).toBe(200);
    expect(written.body).toMatchObject({ version: 1, updated_by: admin.key_id, mappings: [...netops, { group: 'leads', roles: ['approver', 'analyst'] }] });
    expect((await get(admin.key)).body).toEqual(written.body);
    const second = await put(admin.key, { ...written.body, mappings: netops });
    expect(second.body.version).toBe(2);
    const history = await t.request<{ data: MappingsView[] }>('GET', '/v1/sso/group-mappings/versions', { key: admin.key });
    expect(history.body.data.map((v) => v.version)).toEqual([2, 1]);
  });

  test('a change is audited with the mappings it set and the version it replaced', async () => {
    const admin = await t.mintKey({ role: 'admin' });
    await put(admin.key, { version: 0, mappings: netops });
    const audit = await t.request<Page<AuditEntryView>>('GET', '/v1/audit?limit=5', { key: admin.key });
    expect(audit.body.data.find((e) => e.action === 'sso.group_mappings.update')).toMatchObject({
      actor: admin.key_id,
      target: 'v1',
      details: { version: 1, previous_version: 0, mappings: netops },
    });
  });

  test('a change started from a version no longer in force is 409 and writes nothing', async () => {
    const admin = await t.mintKey({ role: 'admin' });
    await put(admin.key, { version: 0, mappings: netops });
    const stale = await put(admin.key, { version: 0, mappings: [{ group: 'other', roles: ['analyst'] }] });
    expect(stale.status).toBe(409);
    expect(stale.body.error.code).toBe('CONFLICT');
    expect((await get(admin.key)).body.mappings).toEqual(netops);
  });

  test('a mapping naming an unknown role is 400 naming the field', async () => {
    const admin = await t.mintKey({ role: 'admin' });
    const bad = await put(admin.key, { version: 0, mappings: [{ group: 'netops', roles: ['operator', 'superuser'] }] });
    expect(bad.status).toBe(400);
    expect(bad.body.error.code).toBe('VALIDATION_ERROR');
    expect(bad.body.error.details).toEqual([expect.objectContaining({ path: 'mappings.0.roles.1' })]);
  });

  test("one workspace's admin neither sees nor changes another workspace's mappings", async () => {
    const first = await t.mintKey({ role: 'admin' });
    const second = await t.mintKey({ role: 'admin' });
    await put(first.key, { version: 0, mappings: netops });
    expect((await get(second.key)).body).toMatchObject({ version: 0, mappings: [] });
    expect((await put(second.key, { version: 0, mappings: [{ group: 'netops', roles: ['analyst'] }] })).body.version).toBe(1);
    expect((await get(first.key)).body.mappings).toEqual(netops);
  });

  test('keys without keys:manage cannot read or set the mappings', async () => {
    const admin = await t.mintKey({ role: 'admin' });
    const analyst = await t.mintKey({ role: 'analyst', orgId: admin.org_id });
    expect((await get(analyst.key)).status).toBe(403);
    expect((await put(analyst.key, { version: 0, mappings: netops })).status).toBe(403);
  });
});
