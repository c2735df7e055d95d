import { randomBytes, randomInt } from 'node:crypto';
import { maxPrefixesPerWorkspace, type WorkspacePrefix } from '../../core/workspace-prefix';
import { PrefixesRepo } from '../../storage/prefixes-repo';
import type { AdminPrefixView, AuditEntryView, ErrorBody, Page, PendingPrefixView, PrefixView } from '../support/api-types';
import { startTestStack, type TestStack, type Transport } from '../support/test-stack';

/**
 * An IPv4 /16 no other test of the file uses: 10.0.0.0/8 taken in turn from a random start (an even second
 * octet, so its /15 is its own too): random draws collided now and then, and an approval then met a 409.
 */
let nextV4 = randomInt(128);
const freshV4Block = () => `10.${2 * (nextV4++ % 128)}`;
/** An IPv6 /48 in its canonical form (no leading zero in its last group, which the canonical form would drop). */
let nextV6 = randomInt(0x1000, 0xf000);
const freshV6Block = () => `2001:db8:${(nextV6++).toString(16)}`;

/** The prefix routes' calls on a test stack (given late: stacks start in beforeAll). */
function prefixCalls(stack: () => TestStack) {
  const t = () => stack();
  return {
    declare: (key: string, body: unknown) => t().request<PrefixView & ErrorBody>('POST', '/v1/prefixes', { key, body }),
    decide: (decision: 'approve' | 'reject' | 'revoke', id: string, key = t().adminKey) =>
      t().request<AdminPrefixView & ErrorBody>('POST', `/v1/prefixes/${id}/${decision}`, { key }),
    remove: (key: string, id: string) => t().request<PrefixView & ErrorBody>('DELETE', `/v1/prefixes/${id}`, { key }),
    pending: async () => (await t().request<Page<PendingPrefixView>>('GET', '/v1/prefixes/pending?limit=1000', { key: t().adminKey })).body.data,
    approvedOf: (orgId: string) => new PrefixesRepo(t().stack.clickhouse).approved(orgId),
    /** Declares the prefix in the key's workspace and approves it with the platform admin key; returns its id. */
    approved: async (key: string, prefix: string): Promise<string> => {
      const declared = await t().request<PrefixView>('POST', '/v1/prefixes', { key, body: { prefix } });
      expect(declared.status).toBe(201);
      expect((await t().request('POST', `/v1/prefixes/${declared.body.id}/approve`, { key: t().adminKey })).status).toBe(200);
      return declared.body.id;
    },
    audit: async (key: string) => (await t().request<Page<AuditEntryView>>('GET', '/v1/audit', { key })).body.data,
  };
}

describe('workspace prefixes on chdb', () => {
  let t: TestStack;
  beforeAll(async () => {
    t = await startTestStack('chdb', { ROLES: 'api' });
  });
  afterAll(async () => {
    await t.stop();
  });

  const { declare, decide, remove, pending, approvedOf, approved, audit } = prefixCalls(() => t);

  test('a declared prefix is pending in its canonical form, and among the approved only once the platform admin approves it', async () => {
    const { key, org_id } = await t.mintKey({ role: 'admin' });
    const block = freshV6Block();
    const res = await declare(key, { prefix: `${block.toUpperCase()}:0:0:0:0:0/48`, description: 'customer edge' });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ prefix: `${block}::/48`, description: 'customer edge', status: 'pending', version: 1 });
    expect(res.body.id).toMatch(/^pfx_[0-9a-f]{20}$/);
    expect(await approvedOf(org_id)).toEqual([]);
    expect((await decide('approve', res.body.id)).body).toMatchObject({ id: res.body.id, org_id, status: 'approved', version: 2 });
    expect(await approvedOf(org_id)).toEqual([`${block}::/48`]);
  });

  test('a prefix with a host bit set is 400 naming the field and the network it meant', async () => {
    const { key } = await t.mintKey({ role: 'admin' });
    const res = await declare(key, { prefix: '10.1.2.3/24' });
    expect({ status: res.status, code: res.body.error.code }).toEqual({ status: 400, code: 'VALIDATION_ERROR' });
    expect(res.body.error.details).toEqual([{ path: 'prefix', message: '10.1.2.3/24 is not a network address, did you mean 10.1.2.0/24?' }]);
  });

  test('a /4 is 400: wider than a workspace may declare', async () => {
    const { key } = await t.mintKey({ role: 'admin' });
    const res = await declare(key, { prefix: '0.0.0.0/4' });
    expect(res.status).toBe(400);
    expect(res.body.error.details).toEqual([{ path: 'prefix', message: 'a /4 is wider than a workspace may declare (IPv4 /8 to /32)' }]);
  });

  test('declaring a prefix within another workspace approved one gets the same answer as a free prefix, naming nothing of the other', async () => {
    const holder = await t.mintKey({ role: 'admin' });
    const other = await t.mintKey({ role: 'admin' });
    const block = freshV4Block();
    await approved(holder.key, `${block}.0.0/16`);
    const answers = [await declare(other.key, { prefix: `${block}.7.0/24` }), await declare(other.key, { prefix: `${freshV4Block()}.7.0/24` })];
    const shape = (r: (typeof answers)[number]) => ({ status: r.status, keys: Object.keys(r.body).sort(), state: r.body.status, version: r.body.version });
    expect(shape(answers[0]!)).toEqual(shape(answers[1]!));
    expect(shape(answers[0]!)).toMatchObject({ status: 201, state: 'pending' });
    const seen = [answers[0]!.text, (await t.request('GET', `/v1/prefixes/${answers[0]!.body.id}`, { key: other.key })).text, (await t.request('GET', '/v1/prefixes', { key: other.key })).text];
    for (const text of seen) {
      expect(text).not.toContain(holder.org_id);
      expect(text).not.toContain(`${block}.0.0/16`);
    }
  });

  test('the platform admin cannot approve a prefix within another workspace approved one: 409, and it stays pending', async () => {
    const holder = await t.mintKey({ role: 'admin' });
    const other = await t.mintKey({ role: 'admin' });
    const block = freshV4Block();
    const held = await approved(holder.key, `${block}.0.0/16`);
    const id = (await declare(other.key, { prefix: `${block}.128.0/17` })).body.id;
    expect((await pending()).find((p) => p.id === id)?.overlaps_approved).toEqual({ org_id: holder.org_id, prefix_id: held, prefix: `${block}.0.0/16` });
    const refused = await decide('approve', id);
    expect({ status: refused.status, code: refused.body.error.code }).toEqual({ status: 409, code: 'CONFLICT' });
    expect((await t.request<PrefixView>('GET', `/v1/prefixes/${id}`, { key: other.key })).body.status).toBe('pending');
    expect(await approvedOf(other.org_id)).toEqual([]);
  });

  test('the platform admin cannot approve a prefix containing another workspace approved one either', async () => {
    const holder = await t.mintKey({ role: 'admin' });
    const other = await t.mintKey({ role: 'admin' });
    const block = freshV4Block();
    await approved(holder.key, `${block}.9.0/24`);
    const id = (await declare(other.key, { prefix: `${block}.0.0/15` })).body.id;
    expect((await decide('approve', id)).status).toBe(409);
  });

  test('once the holder removes its prefix, the other workspace declaration can be approved', async () => {
    const holder = await t.mintKey({ role: 'admin' });
    const other = await t.mintKey({ role: 'admin' });
    const block = freshV6Block();
    const held = await approved(holder.key, `${block}::/48`);
    const id = (await declare(other.key, { prefix: `${block}:1::/64` })).body.id;
    expect((await remove(holder.key, held)).body).toMatchObject({ id: held, status: 'removed', version: 3 });
    expect(await approvedOf(holder.org_id)).toEqual([]);
    expect((await decide('approve', id)).status).toBe(200);
    expect(await approvedOf(other.org_id)).toEqual([`${block}:1::/64`]);
  });

  test('a workspace may hold overlapping prefixes of its own', async () => {
    const { key, org_id } = await t.mintKey({ role: 'admin' });
    const block = freshV4Block();
    await approved(key, `${block}.0.0/16`);
    await approved(key, `${block}.3.0/24`);
    expect(await approvedOf(org_id)).toEqual([`${block}.0.0/16`, `${block}.3.0/24`]);
  });

  test('declaring a prefix the workspace already has pending or approved is 409', async () => {
    const { key } = await t.mintKey({ role: 'admin' });
    const prefix = `${freshV4Block()}.5.0/24`;
    expect((await declare(key, { prefix })).status).toBe(201);
    expect((await declare(key, { prefix })).status).toBe(409);
  });

  test('a workspace another workspace prefix is unknown to: 404 to read or remove it', async () => {
    const owner = await t.mintKey({ role: 'admin' });
    const stranger = await t.mintKey({ role: 'admin' });
    const id = (await declare(owner.key, { prefix: `${freshV4Block()}.0.0/16` })).body.id;
    const answers = [await t.request<ErrorBody>('GET', `/v1/prefixes/${id}`, { key: stranger.key }), await remove(stranger.key, id)];
    expect(answers.map((r) => [r.status, r.body.error.code])).toEqual([[404, 'NOT_FOUND'], [404, 'NOT_FOUND']]);
    expect((await t.request<Page<PrefixView>>('GET', '/v1/prefixes', { key: stranger.key })).body.data).toEqual([]);
  });

  test('a workspace key gets 403 for the pending list, approvals and rejections, even an admin one', async () => {
    const { key } = await t.mintKey({ role: 'admin' });
    const id = (await declare(key, { prefix: `${freshV4Block()}.0.0/16` })).body.id;
    const answers = [await t.request<ErrorBody>('GET', '/v1/prefixes/pending', { key }), await decide('approve', id, key), await decide('reject', id, key)];
    expect(answers.map((r) => [r.status, r.body.error.code])).toEqual(answers.map(() => [403, 'FORBIDDEN']));
    expect((await t.request<PrefixView>('GET', `/v1/prefixes/${id}`, { key })).body.status).toBe('pending');
  });

  test('a key without prefixes:manage (an operator) is 403 to declare or remove, and may read', async () => {
    const admin = await t.mintKey({ role: 'admin' });
    const { key } = await t.mintKey({ role: 'operator', orgId: admin.org_id });
    const id = (await declare(admin.key, { prefix: `${freshV4Block()}.0.0/16` })).body.id;
    const answers = [await declare(key, { prefix: `${freshV4Block()}.0.0/16` }), await remove(key, id)];
    expect(answers.map((r) => [r.status, r.body.error.code])).toEqual([[403, 'FORBIDDEN'], [403, 'FORBIDDEN']]);
    expect((await t.request<PrefixView>('GET', `/v1/prefixes/${id}`, { key })).status).toBe(200);
  });

  test('every declaration, approval, rejection and removal is in the workspace audit ledger', async () => {
    const { key, key_id } = await t.mintKey({ role: 'admin' });
    const kept = await approved(key, `${freshV4Block()}.0.0/16`);
    await remove(key, kept);
    const refused = (await declare(key, { prefix: `${freshV6Block()}::/48` })).body.id;
    await decide('reject', refused);
    const entries = (await audit(key)).filter((e) => e.action.startsWith('prefix.')).reverse();
    expect(entries.map((e) => [e.action, e.target, e.actor])).toEqual([
      ['prefix.declare', kept, key_id],
      ['prefix.approve', kept, 'platform-admin'],
      ['prefix.remove', kept, key_id],
      ['prefix.declare', refused, key_id],
      ['prefix.reject', refused, 'platform-admin'],
    ]);
  });

  test('a removed or rejected prefix cannot be removed, approved or rejected again: 409', async () => {
    const { key } = await t.mintKey({ role: 'admin' });
    const removed = (await declare(key, { prefix: `${freshV4Block()}.0.0/16` })).body.id;
    await remove(key, removed);
    const rejected = (await declare(key, { prefix: `${freshV4Block()}.0.0/16` })).body.id;
    await decide('reject', rejected);
    const answers = [await remove(key, removed), await decide('approve', removed), await remove(key, rejected), await decide('approve', rejected), await decide('reject', rejected)];
    expect(answers.map((r) => [r.status, r.body.error.code])).toEqual(answers.map(() => [409, 'CONFLICT']));
  });

  test('the platform admin revokes an approved prefix: it leaves the approved prefixes, is audited in its workspace, and frees the addresses for another', async () => {
    const holder = await t.mintKey({ role: 'admin' });
    const other = await t.mintKey({ role: 'admin' });
    const block = freshV4Block();
    const held = await approved(holder.key, `${block}.0.0/16`);
    const revoked = await decide('revoke', held);
    expect({ status: revoked.status, body: revoked.body }).toMatchObject({ status: 200, body: { id: held, org_id: holder.org_id, status: 'revoked', version: 3 } });
    expect(await approvedOf(holder.org_id)).toEqual([]);
    const entries = (await audit(holder.key)).filter((e) => e.target === held);
    expect(entries[0]).toMatchObject({ action: 'prefix.revoke', actor: 'platform-admin' });
    const within = (await declare(other.key, { prefix: `${block}.9.0/24` })).body.id;
    expect((await decide('approve', within)).status).toBe(200);
  });

  test('a workspace key gets 403 to revoke a prefix, even an admin one of its own workspace, and the prefix stays approved', async () => {
    const { key, org_id } = await t.mintKey({ role: 'admin' });
    const prefix = `${freshV4Block()}.0.0/16`;
    const id = await approved(key, prefix);
    const refused = await decide('revoke', id, key);
    expect({ status: refused.status, code: refused.body.error.code }).toEqual({ status: 403, code: 'FORBIDDEN' });
    expect(await approvedOf(org_id)).toEqual([prefix]);
  });

  test('only an approved prefix can be revoked: 409 for a pending, rejected or already revoked one, and 404 for an unknown id', async () => {
    const { key } = await t.mintKey({ role: 'admin' });
    const waiting = (await declare(key, { prefix: `${freshV4Block()}.0.0/16` })).body.id;
    const rejected = (await declare(key, { prefix: `${freshV4Block()}.0.0/16` })).body.id;
    await decide('reject', rejected);
    const revoked = await approved(key, `${freshV4Block()}.0.0/16`);
    await decide('revoke', revoked);
    const answers = [await decide('revoke', waiting), await decide('revoke', rejected), await decide('revoke', revoked)];
    expect(answers.map((r) => [r.status, r.body.error.code])).toEqual(answers.map(() => [409, 'CONFLICT']));
    const unknown = await decide('revoke', `pfx_${randomBytes(10).toString('hex')}`);
    expect([unknown.status, unknown.body.error.code]).toEqual([404, 'NOT_FOUND']);
  });

  test('a workspace holding 256 prefixes gets 409 for one more, and may declare again once it removes one', async () => {
    const { key, org_id } = await t.mintKey({ role: 'admin' });
    const repo = new PrefixesRepo(t.stack.clickhouse);
    const now = Date.now();
    const held = Array.from({ length: maxPrefixesPerWorkspace }, (_, i): WorkspacePrefix => ({
      id: `pfx_${randomBytes(10).toString('hex')}`, org_id, prefix: `172.${16 + (i >> 8)}.${i & 255}.0/24`, description: '', status: 'pending',
      created_at: now, created_by: 'seed', updated_at: now, version: 1,
    }));
    for (const p of held) await repo.put(p);
    const over = await declare(key, { prefix: '192.0.2.0/24' });
    expect({ status: over.status, code: over.body.error.code }).toEqual({ status: 409, code: 'CONFLICT' });
    await remove(key, held[0]!.id);
    expect((await declare(key, { prefix: '192.0.2.0/24' })).status).toBe(201);
  });

  test('the platform admin lists pending declarations of every workspace, oldest first, with their workspaces', async () => {
    const a = await t.mintKey({ role: 'admin' });
    const b = await t.mintKey({ role: 'admin' });
    const first = (await declare(a.key, { prefix: `${freshV4Block()}.0.0/16` })).body;
    const second = (await declare(b.key, { prefix: `${freshV6Block()}::/48` })).body;
    const done = await approved(a.key, `${freshV4Block()}.0.0/16`);
    const rows = await pending();
    expect(rows.filter((p) => [first.id, second.id, done].includes(p.id))).toEqual([
      { ...first, org_id: a.org_id, overlaps_approved: null },
      { ...second, org_id: b.org_id, overlaps_approved: null },
    ]);
    expect(rows.map((p) => p.created_at)).toEqual([...rows.map((p) => p.created_at)].sort());
    const page = await t.request<Page<PendingPrefixView>>('GET', '/v1/prefixes/pending?limit=1', { key: t.adminKey });
    const next = await t.request<Page<PendingPrefixView>>('GET', `/v1/prefixes/pending?limit=1&cursor=${page.body.next_cursor}`, { key: t.adminKey });
    expect(next.body.data[0]?.id).toBe(rows[1]?.id);
  });
});

describe.each<Transport>(['clickhouse-server'])('workspace prefixes on %s', (transport) => {
  let t: TestStack;
  beforeAll(async () => {
    t = await startTestStack(transport, { ROLES: 'api' });
  });
  afterAll(async () => {
    await t.stop();
  });

  const { declare, decide, pending, approvedOf, approved } = prefixCalls(() => t);

  test('a declaration is approved once, an overlapping one of another workspace is shown and refused, and only the approved are read back', async () => {
    const holder = await t.mintKey({ role: 'admin' });
    const other = await t.mintKey({ role: 'admin' });
    const block = freshV6Block();
    const held = await approved(holder.key, `${block}::/48`);
    const within = (await declare(other.key, { prefix: `${block}:ff00::/56` })).body.id;
    const free = (await declare(other.key, { prefix: `${freshV4Block()}.0.0/16` })).body;
    const rows = await pending();
    expect(rows.find((p) => p.id === within)?.overlaps_approved).toEqual({ org_id: holder.org_id, prefix_id: held, prefix: `${block}::/48` });
    expect(rows.find((p) => p.id === free.id)?.overlaps_approved).toBeNull();
    expect((await decide('approve', within)).status).toBe(409);
    expect((await decide('approve', free.id)).status).toBe(200);
    expect(await approvedOf(other.org_id)).toEqual([free.prefix]);
    expect(await approvedOf(holder.org_id)).toEqual([`${block}::/48`]);
  });
});
