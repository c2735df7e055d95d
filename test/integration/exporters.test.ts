import type { DataOf, ErrorBody, ExporterView, Page, UnknownExporterView } from '../support/api-types';
import { exporterCalls, stringMatching, freshIpv4, freshIpv6, hex20 } from '../support/exporter-calls';
import { startTestStack, transports, type TestStack } from '../support/test-stack';

describe.each(transports)('exporters on %s', (transport) => {
  let t: TestStack;
  beforeAll(async () => {
    t = await startTestStack(transport, { ROLES: 'api' });
  });
  afterAll(async () => {
    await t.stop();
  });

  const { create, auditActions, decide, approved } = exporterCalls(() => t);

  test('a registered exporter is pending, its address normalized, and its creation audited', async () => {
    const { key } = await t.mintKey({ role: 'operator' });
    const res = await create(key, { address: '2001:DB8:0:0:0:0:0:A1', name: 'edge-1', sampling_rate: 1000 });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      id: stringMatching(/^exp_[0-9a-f]{20}$/),
      address: '2001:db8::a1',
      name: 'edge-1',
      sampling_rate: 1000,
      status: 'pending',
      version: 1,
    });
    expect((await t.request<ExporterView>('GET', `/v1/exporters/${res.body.id}`, { key })).body).toEqual(res.body);
    expect(await auditActions(key)).toContain('exporter.create');
  });

  test('GET /v1/exporters pages through the workspace exporters newest first', async () => {
    const { key } = await t.mintKey({ role: 'operator' });
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push((await create(key, { address: freshIpv4() })).body.id);
    const first = await t.request<Page<ExporterView>>('GET', '/v1/exporters?limit=2', { key });
    expect(first.body.next_cursor).not.toBeNull();
    const second = await t.request<Page<ExporterView>>('GET', `/v1/exporters?limit=2&cursor=${first.body.next_cursor}`, { key });
    expect(second.body.next_cursor).toBeNull();
    expect([...first.body.data, ...second.body.data].map((e) => e.id).sort()).toEqual([...ids].sort());
  });

  test('PATCH changes the name and sampling rate, null clears the rate, and each change is audited', async () => {
    const { key } = await t.mintKey({ role: 'operator' });
    const id = (await create(key, { address: freshIpv4(), sampling_rate: 100 })).body.id;
    const renamed = await t.request<ExporterView>('PATCH', `/v1/exporters/${id}`, { key, body: { name: 'core-2', sampling_rate: 512 } });
    expect(renamed.status).toBe(200);
    expect(renamed.body).toMatchObject({ name: 'core-2', sampling_rate: 512, version: 2 });
    const cleared = await t.request<ExporterView>('PATCH', `/v1/exporters/${id}`, { key, body: { sampling_rate: null } });
    expect(cleared.body).toMatchObject({ name: 'core-2', sampling_rate: null, version: 3 });
    expect((await auditActions(key)).slice(0, 3)).toEqual(['exporter.update', 'exporter.update', 'exporter.create']);
  });

  test('DELETE marks the exporter deleted, audits it, and a second DELETE is 409', async () => {
    const { key } = await t.mintKey({ role: 'operator' });
    const id = await approved(key, freshIpv4());
    const deleted = await t.request<ExporterView>('DELETE', `/v1/exporters/${id}`, { key });
    expect(deleted.body).toMatchObject({ id, status: 'deleted' });
    expect((await t.request<Page<ExporterView>>('GET', '/v1/exporters?status=active', { key })).body.data).toEqual([]);
    expect((await t.request<ErrorBody>('DELETE', `/v1/exporters/${id}`, { key })).body.error.code).toBe('CONFLICT');
    expect((await auditActions(key)).slice(0, 3)).toEqual(['exporter.delete', 'exporter.approve', 'exporter.create']);
  });

  test('DELETE withdraws a pending registration, which can then no longer be approved', async () => {
    const { key } = await t.mintKey({ role: 'operator' });
    const id = (await create(key, { address: freshIpv4() })).body.id;
    expect((await t.request<ExporterView>('DELETE', `/v1/exporters/${id}`, { key })).body.status).toBe('deleted');
    const refused = await decide('approve', id);
    expect({ status: refused.status, code: refused.body.error.code }).toEqual({ status: 409, code: 'CONFLICT' });
  });

  test('the list filters by each status', async () => {
    const { key } = await t.mintKey({ role: 'operator' });
    const ids = {
      pending: (await create(key, { address: freshIpv4() })).body.id,
      active: await approved(key, freshIpv4()),
      rejected: (await create(key, { address: freshIpv4() })).body.id,
      deleted: (await create(key, { address: freshIpv4() })).body.id,
    };
    await decide('reject', ids.rejected);
    await t.request('DELETE', `/v1/exporters/${ids.deleted}`, { key });
    const listed: Record<string, string[]> = {};
    for (const status of Object.keys(ids)) {
      listed[status] = (await t.request<Page<ExporterView>>('GET', `/v1/exporters?status=${status}`, { key })).body.data.map((e) => e.id);
    }
    expect(listed).toEqual({ pending: [ids.pending], active: [ids.active], rejected: [ids.rejected], deleted: [ids.deleted] });
  });

  test('an address the same workspace has pending or active is 409 CONFLICT', async () => {
    const { key } = await t.mintKey({ role: 'operator' });
    const pendingAddress = freshIpv4();
    expect((await create(key, { address: pendingAddress })).status).toBe(201);
    expect((await t.request<ErrorBody>('POST', '/v1/exporters', { key, body: { address: pendingAddress } })).status).toBe(409);
    const activeAddress = freshIpv4();
    await approved(key, activeAddress);
    expect((await t.request<ErrorBody>('POST', '/v1/exporters', { key, body: { address: activeAddress } })).status).toBe(409);
  });

  test('an IPv4-mapped IPv6 address and its IPv4 form are the same address', async () => {
    const a = await t.mintKey({ role: 'operator' });
    const b = await t.mintKey({ role: 'operator' });
    const address = freshIpv4();
    const mapped = await create(a.key, { address: `::FFFF:${address}` });
    expect(mapped.body.address).toBe(address);
    expect((await decide('approve', mapped.body.id)).status).toBe(200);
    const plain = await create(b.key, { address });
    expect((await decide('approve', plain.body.id)).status).toBe(409);
  });

  test('another workspace exporter is 404 to read, change or delete, and absent from its list', async () => {
    const a = await t.mintKey({ role: 'operator' });
    const b = await t.mintKey({ role: 'operator' });
    const id = (await create(a.key, { address: freshIpv4() })).body.id;
    expect((await t.request('GET', `/v1/exporters/${id}`, { key: b.key })).status).toBe(404);
    expect((await t.request('PATCH', `/v1/exporters/${id}`, { key: b.key, body: { name: 'x' } })).status).toBe(404);
    expect((await t.request('DELETE', `/v1/exporters/${id}`, { key: b.key })).status).toBe(404);
    expect((await t.request<Page<ExporterView>>('GET', '/v1/exporters', { key: b.key })).body.data).toEqual([]);
  });

  test('an id of any unknown form is 404 NOT_FOUND', async () => {
    const { key } = await t.mintKey({ role: 'operator' });
    const ids = [`exp_${hex20()}`, `pol_${hex20()}`, `exp_${hex20()}`.toUpperCase(), 'x', `exp_${'f'.repeat(4000)}`, 'exp_💥', "exp_' OR '1'='1"];
    const answers = [];
    for (const id of ids) {
      for (const method of ['GET', 'PATCH', 'DELETE']) {
        const res = await t.request<ErrorBody>(method, `/v1/exporters/${encodeURIComponent(id)}`, { key, body: method === 'PATCH' ? { name: 'x' } : undefined });
        answers.push({ method, status: res.status, code: res.body.error.code });
      }
    }
    expect(answers).toEqual(ids.flatMap(() => ['GET', 'PATCH', 'DELETE'].map((method) => ({ method, status: 404, code: 'NOT_FOUND' }))));
  });

  test('an analyst may list exporters but not register one', async () => {
    const operator = await t.mintKey({ role: 'operator' });
    const analyst = await t.mintKey({ role: 'analyst', orgId: operator.org_id });
    expect((await t.request('GET', '/v1/exporters', { key: analyst.key })).status).toBe(200);
    const refused = await t.request<ErrorBody>('POST', '/v1/exporters', { key: analyst.key, body: { address: freshIpv4() } });
    expect({ status: refused.status, code: refused.body.error.code }).toEqual({ status: 403, code: 'FORBIDDEN' });
  });

  test('malformed bodies are 400 VALIDATION_ERROR naming the field', async () => {
    const { key } = await t.mintKey({ role: 'operator' });
    const bodies: Array<[body: unknown, path: string]> = [
      [{}, 'address'],
      [{ address: '10.0.0.300' }, 'address'],
      [{ address: 'fe80::1%eth0' }, 'address'],
      [{ address: 42 }, 'address'],
      [{ address: freshIpv4(), sampling_rate: 0 }, 'sampling_rate'],
      [{ address: freshIpv4(), sampling_rate: 1_000_001 }, 'sampling_rate'],
      [{ address: freshIpv4(), sampling_rate: 2.5 }, 'sampling_rate'],
      [{ address: freshIpv4(), name: '' }, 'name'],
      [{ address: freshIpv4(), colour: 'red' }, '(root)'],
    ];
    const answers = [];
    for (const [body] of bodies) {
      const res = await t.request<ErrorBody>('POST', '/v1/exporters', { key, body });
      answers.push({ status: res.status, code: res.body.error.code, path: res.body.error.details?.[0]?.path });
    }
    expect(answers).toEqual(bodies.map(([, path]) => ({ status: 400, code: 'VALIDATION_ERROR', path })));
  });

  test('a PATCH with no field or a bad rate is 400', async () => {
    const { key } = await t.mintKey({ role: 'operator' });
    const id = (await create(key, { address: freshIpv4() })).body.id;
    expect((await t.request('PATCH', `/v1/exporters/${id}`, { key, body: {} })).status).toBe(400);
    expect((await t.request('PATCH', `/v1/exporters/${id}`, { key, body: { sampling_rate: -1 } })).status).toBe(400);
    expect((await t.request('PATCH', `/v1/exporters/${id}`, { key, body: { address: freshIpv4() } })).status).toBe(400);
  });

  test('the platform admin sees the unknown exporters with their counts summed and their first and last minute', async () => {
    const address = freshIpv6();
    const minute = Math.floor(Date.now() / 60_000) * 60_000;
    const rows = [
      { address, minute: minute - 120_000, datagrams: 3, flows: 30 },
      { address, minute, datagrams: 2, flows: 12 },
      { address, minute, datagrams: 1, flows: 5 },
    ];
    await t.stack.clickhouse.insertJsonEachRow('unknown_exporters', rows.map((r) => JSON.stringify(r)).join('\n') + '\n');
    const res = await t.request<DataOf<UnknownExporterView>>('GET', '/v1/exporters/unknown', { key: t.adminKey });
    expect(res.status).toBe(200);
    expect(res.body.data.find((u) => u.address === address)).toEqual({
      address,
      first_seen: new Date(minute - 120_000).toISOString(),
      last_seen: new Date(minute).toISOString(),
      datagrams: 6,
      flows: 47,
    });
  });

  test('an unknown exporter a workspace registered stays listed while pending, and leaves the list once approved', async () => {
    const address = freshIpv4();
    await t.stack.clickhouse.insertJsonEachRow('unknown_exporters', JSON.stringify({ address, minute: Math.floor(Date.now() / 60_000) * 60_000, datagrams: 1, flows: 1 }) + '\n');
    const unknown = async () => (await t.request<DataOf<UnknownExporterView>>('GET', '/v1/exporters/unknown?limit=1000', { key: t.adminKey })).body.data.map((u) => u.address);
    const { key } = await t.mintKey({ role: 'operator' });
    const id = (await create(key, { address })).body.id;
    expect(await unknown()).toContain(address);
    expect((await decide('approve', id)).status).toBe(200);
    expect(await unknown()).not.toContain(address);
  });

  test('a workspace key gets 403 FORBIDDEN for the unknown exporters, even an admin one', async () => {
    const { key } = await t.mintKey({ role: 'admin' });
    const res = await t.request<ErrorBody>('GET', '/v1/exporters/unknown', { key });
    expect({ status: res.status, code: res.body.error.code }).toEqual({ status: 403, code: 'FORBIDDEN' });
  });

  test('the platform admin key gets 403 on a workspace exporter list', async () => {
    expect((await t.request('GET', '/v1/exporters', { key: t.adminKey })).status).toBe(403);
  });
});
