import type { ErrorBody, Page, PendingExporterView } from '../support/api-types';
import { exporterCalls, freshIpv4, freshIpv6, hex20 } from '../support/exporter-calls';
import { startTestStack, transports, type TestStack } from '../support/test-stack';

describe.each(transports)('exporter approvals on %s', (transport) => {
  let t: TestStack;
  beforeAll(async () => {
    t = await startTestStack(transport, { ROLES: 'api' });
  });
  afterAll(async () => {
    await t.stop();
  });

  const { create, audit, decide, approved, statusOf, allPending } = exporterCalls(() => t);

  test('registering an address another workspace holds gets the same answer as a free address, and no 409 tells', async () => {
    const holder = await t.mintKey({ role: 'operator' });
    const other = await t.mintKey({ role: 'operator' });
    const held = freshIpv6();
    await approved(holder.key, held);
    const answers = [await create(other.key, { address: held, name: 'edge' }), await create(other.key, { address: freshIpv6(), name: 'edge' })];
    // Everything but the id, the address and the times is the same, and nothing names the other workspace.
    const shape = (r: (typeof answers)[number]) => ({ status: r.status, keys: Object.keys(r.body).sort(), name: r.body.name, state: r.body.status, version: r.body.version });
    expect(shape(answers[0]!)).toEqual(shape(answers[1]!));
    expect(shape(answers[0]!)).toMatchObject({ status: 201, state: 'pending' });
    expect(JSON.stringify(answers[0]!.body)).not.toContain(holder.org_id);
    // A pending registration of the held address by a second workspace is answered alike too.
    const third = await t.mintKey({ role: 'operator' });
    expect((await create(third.key, { address: held })).status).toBe(201);
  });

  test('the platform admin cannot approve an address another workspace has active: 409 naming the holder, and the registration stays pending', async () => {
    const holder = await t.mintKey({ role: 'operator' });
    const other = await t.mintKey({ role: 'operator' });
    const address = freshIpv4();
    const held = await approved(holder.key, address);
    const id = (await create(other.key, { address })).body.id;
    const pending = (await allPending()).find((e) => e.id === id);
    expect(pending?.address_active_for).toEqual({ org_id: holder.org_id, exporter_id: held });
    const refused = await decide('approve', id);
    expect({ status: refused.status, code: refused.body.error.code }).toEqual({ status: 409, code: 'CONFLICT' });
    expect(refused.body.error.message).toContain(holder.org_id);
    expect(await statusOf(other.key, id)).toBe('pending');
  });

  test('once the holder deletes its exporter, the other workspace pending registration can be approved', async () => {
    const holder = await t.mintKey({ role: 'operator' });
    const other = await t.mintKey({ role: 'operator' });
    const address = freshIpv4();
    const held = await approved(holder.key, address);
    const id = (await create(other.key, { address })).body.id;
    await t.request('DELETE', `/v1/exporters/${held}`, { key: holder.key });
    expect((await decide('approve', id)).status).toBe(200);
    expect(await statusOf(other.key, id)).toBe('active');
  });

  test('registrations of one address by several workspaces at once are all pending, and approvals at once activate one', async () => {
    const keys = await Promise.all([1, 2, 3, 4].map(() => t.mintKey({ role: 'operator' })));
    const address = freshIpv4();
    const answers = await Promise.all(keys.map((k) => create(k.key, { address })));
    expect(answers.map((r) => [r.status, r.body.status])).toEqual(keys.map(() => [201, 'pending']));
    const decisions = await Promise.all(answers.map((r) => decide('approve', r.body.id)));
    expect(decisions.map((r) => r.status).sort()).toEqual([200, 409, 409, 409]);
  });

  test('the platform admin lists pending registrations of every workspace, oldest first, with their workspaces', async () => {
    const a = await t.mintKey({ role: 'operator' });
    const b = await t.mintKey({ role: 'operator' });
    const first = (await create(a.key, { address: freshIpv4(), sampling_rate: 10 })).body;
    const second = (await create(b.key, { address: freshIpv6() })).body;
    const active = await approved(a.key, freshIpv4());
    const rows = await allPending();
    const mine = rows.filter((e) => [first.id, second.id, active].includes(e.id));
    expect(mine).toEqual([
      { ...first, org_id: a.org_id, address_active_for: null },
      { ...second, org_id: b.org_id, address_active_for: null },
    ]);
    expect(rows.map((e) => e.created_at)).toEqual([...rows.map((e) => e.created_at)].sort());
    const page = await t.request<Page<PendingExporterView>>('GET', '/v1/exporters/pending?limit=1', { key: t.adminKey });
    expect(page.body.data).toHaveLength(1);
    const next = await t.request<Page<PendingExporterView>>('GET', `/v1/exporters/pending?limit=1&cursor=${page.body.next_cursor}`, { key: t.adminKey });
    expect(next.body.data[0]?.id).toBe(rows[1]?.id);
  });

  test('an approval is audited in the workspace ledger as the platform admin, and a second approval is 409', async () => {
    const { key, org_id } = await t.mintKey({ role: 'operator' });
    const id = (await create(key, { address: freshIpv4() })).body.id;
    const answer = await decide('approve', id);
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ id, org_id, status: 'active', version: 2 });
    expect((await audit(key))[0]).toMatchObject({ actor: 'platform-admin', action: 'exporter.approve', target: id });
    expect((await decide('approve', id)).status).toBe(409);
  });

  test('a rejection is audited in the workspace ledger, and a rejected exporter is never approved nor changed', async () => {
    const { key, org_id } = await t.mintKey({ role: 'operator' });
    const id = (await create(key, { address: freshIpv4() })).body.id;
    const answer = await decide('reject', id);
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ id, org_id, status: 'rejected', version: 2 });
    expect((await audit(key))[0]).toMatchObject({ actor: 'platform-admin', action: 'exporter.reject', target: id });
    expect((await allPending()).map((e) => e.id)).not.toContain(id);
    const refusals = [
      await decide('approve', id),
      await decide('reject', id),
      await t.request<ErrorBody>('PATCH', `/v1/exporters/${id}`, { key, body: { name: 'x' } }),
      await t.request<ErrorBody>('DELETE', `/v1/exporters/${id}`, { key }),
    ];
    expect(refusals.map((r) => [r.status, r.body.error.code])).toEqual(refusals.map(() => [409, 'CONFLICT']));
    expect(await statusOf(key, id)).toBe('rejected');
  });

  test('a workspace key gets 403 FORBIDDEN for the pending list, approvals and rejections, even an admin one', async () => {
    const { key } = await t.mintKey({ role: 'admin' });
    const id = (await create(key, { address: freshIpv4() })).body.id;
    const answers = [
      await t.request<ErrorBody>('GET', '/v1/exporters/pending', { key }),
      await decide('approve', id, key),
      await decide('reject', id, key),
    ];
    expect(answers.map((r) => [r.status, r.body.error.code])).toEqual(answers.map(() => [403, 'FORBIDDEN']));
    expect(await statusOf(key, id)).toBe('pending');
  });

  test('an approval or rejection of an id no workspace has is 404', async () => {
    for (const decision of ['approve', 'reject'] as const) {
      const res = await decide(decision, `exp_${hex20()}`);
      expect({ status: res.status, code: res.body.error.code }).toEqual({ status: 404, code: 'NOT_FOUND' });
    }
  });

});
