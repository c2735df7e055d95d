import { AuditLedger } from '../../application/audit-ledger';
import { chainEntry, type AuditEntry } from '../../core/audit-chain';
import { AuditRepo } from '../../storage/audit-repo';
import { AuditHeads } from '../../streams/audit-heads';
import type { AuditEntryView, Page } from '../support/api-types';
import { startTestStack, transports, type TestStack } from '../support/test-stack';
import { waitForMutations } from '../support/wait';
import { orgIs, storedCount } from '../support/stored-count';

describe.each(transports)('audit ledger on %s', (transport) => {
  let t: TestStack;
  beforeAll(async () => {
    t = await startTestStack(transport);
  });
  afterAll(async () => {
    await t.stop();
  });

  test('every key creation and revocation appends an entry linked by hash to the one before', async () => {
    const admin = await t.mintKey({ role: 'admin' });
    const other = await t.mintKey({ orgId: admin.org_id });
    await t.request('DELETE', `/v1/api-keys/${other.key_id}`, { key: admin.key });
    const res = await t.request<Page<AuditEntryView>>('GET', '/v1/audit', { key: admin.key });
    expect(res.status).toBe(200);
    const entries = res.body.data;
    expect(entries.map((e: { action: string }) => e.action)).toEqual(['api_key.revoke', 'api_key.create', 'api_key.create']);
    expect(entries.map((e: { seq: number }) => e.seq)).toEqual([3, 2, 1]);
    expect(entries[0]!.prev_hash).toBe(entries[1]!.hash);
    expect(entries[1]!.prev_hash).toBe(entries[2]!.hash);
    expect(entries[0]).toMatchObject({ actor: admin.key_id, target: other.key_id });
    const verdict = await t.request('GET', '/v1/audit/verify', { key: admin.key });
    expect(verdict.body).toEqual({ valid: true, entries: 3, complete: true, next_cursor: null });
  });

  test('concurrent changes in one workspace still form one unbroken chain', async () => {
    const admin = await t.mintKey({ role: 'admin' });
    await Promise.all(Array.from({ length: 20 }, () => t.mintKey({ orgId: admin.org_id, role: 'analyst' })));
    const verdict = await t.request('GET', '/v1/audit/verify', { key: admin.key });
    expect(verdict.body).toEqual({ valid: true, entries: 21, complete: true, next_cursor: null });
  });

  test('two workspaces cannot see each other audit entries', async () => {
    const a = await t.mintKey({ role: 'admin' });
    const b = await t.mintKey({ role: 'admin' });
    await t.mintKey({ orgId: a.org_id });
    const listB = await t.request<Page<AuditEntryView>>('GET', '/v1/audit', { key: b.key });
    expect(listB.body.data).toHaveLength(1);
    expect(listB.body.data[0]!.target).toBe(b.key_id);
    const targetsA = (await t.request<Page<AuditEntryView>>('GET', '/v1/audit', { key: a.key })).body.data.map((e: { target: string }) => e.target);
    expect(targetsA).not.toContain(b.key_id);
  });

  test('the platform admin reads a workspace ledger only by naming its org', async () => {
    const a = await t.mintKey({ role: 'admin' });
    const unnamed = await t.request<Page<AuditEntryView>>('GET', '/v1/audit', { key: t.adminKey });
    expect(unnamed.status).toBe(400);
    const named = await t.request<Page<AuditEntryView>>('GET', `/v1/audit?org_id=${a.org_id}`, { key: t.adminKey });
    expect(named.status).toBe(200);
    expect(named.body.data).toHaveLength(1);
  });

  test('the ledger pages newest first with a cursor', async () => {
    const admin = await t.mintKey({ role: 'admin' });
    for (let i = 0; i < 4; i += 1) await t.mintKey({ orgId: admin.org_id });
    const first = await t.request<Page<AuditEntryView>>('GET', '/v1/audit?limit=3', { key: admin.key });
    expect(first.body.data.map((e: { seq: number }) => e.seq)).toEqual([5, 4, 3]);
    const second = await t.request<Page<AuditEntryView>>('GET', `/v1/audit?limit=3&cursor=${first.body.next_cursor}`, { key: admin.key });
    expect(second.body.data.map((e: { seq: number }) => e.seq)).toEqual([2, 1]);
    expect(second.body.next_cursor).toBeNull();
  });

  test('tampering with a stored audit entry makes verify report the break at that entry', async () => {
    const admin = await t.mintKey({ role: 'admin' });
    for (let i = 0; i < 3; i += 1) await t.mintKey({ orgId: admin.org_id });
    const db = t.stack.clickhouse.database;
    await t.stack.clickhouse.exec(
      `ALTER TABLE ${db}.audit_log UPDATE actor = 'someone-else' WHERE org_id = '${admin.org_id}' AND seq = 2`,
    );
    // Mutations apply in the background on every ClickHouse generation; wait until this one has.
    await waitForMutations(t.stack.clickhouse, 'audit_log');
    const verdict = await t.request('GET', '/v1/audit/verify', { key: admin.key });
    expect(verdict.body).toMatchObject({ valid: false, broken_at: 2, reason: 'entry content does not match its hash' });
  });

  test('a ledger rebuilt consistently by whoever writes the database, without the chain key, does not verify', async () => {
    const admin = await t.mintKey({ role: 'admin' });
    for (let i = 0; i < 3; i += 1) await t.mintKey({ orgId: admin.org_id });
    const ch = t.stack.clickhouse;
    const stored = await ch.query<AuditEntry>(`SELECT * FROM ${ch.database}.audit_log WHERE org_id = '${admin.org_id}' ORDER BY seq`);
    const entries = stored.map((e) => ({ ...e, seq: Number(e.seq), at: Number(e.at) }));
    // Entry 2 changed, and every hash from it on rebuilt in the only form a forger without the key can compute.
    let prev = entries[0]!.hash;
    const forged = entries.slice(1).map((e, i) => {
      const entry = chainEntry(i === 0 ? { ...e, actor: 'someone-else' } : e, prev, undefined);
      prev = entry.hash;
      return entry;
    });
    await ch.exec(`ALTER TABLE ${ch.database}.audit_log DELETE WHERE org_id = '${admin.org_id}' AND seq >= 2`);
    await waitForMutations(ch, 'audit_log');
    await ch.insertJsonEachRow('audit_log', forged.map((e) => JSON.stringify(e)).join('\n') + '\n');
    const verdict = await t.request('GET', '/v1/audit/verify', { key: admin.key });
    expect(verdict.body).toMatchObject({ valid: false, broken_at: 2, reason: 'an unkeyed entry after a keyed one' });
  });

  test('an entry removed from the ledger makes verify report the gap', async () => {
    const admin = await t.mintKey({ role: 'admin' });
    for (let i = 0; i < 3; i += 1) await t.mintKey({ orgId: admin.org_id });
    const db = t.stack.clickhouse.database;
    await t.stack.clickhouse.exec(`ALTER TABLE ${db}.audit_log DELETE WHERE org_id = '${admin.org_id}' AND seq = 3`);
    await waitForMutations(t.stack.clickhouse, 'audit_log');
    const verdict = await t.request('GET', '/v1/audit/verify', { key: admin.key });
    expect(verdict.body).toMatchObject({ valid: false, broken_at: 3 });
  });

  test('two API processes appending to one workspace at once still form one unbroken chain', async () => {
    const admin = await t.mintKey({ role: 'admin' });
    const stack = t.stack;
    // Two ledgers with their own heads and repositories: what two API processes hold.
    const ledgers = await Promise.all(
      [0, 1].map(async () => {
        const heads = new AuditHeads(stack.nats, stack.config.nats.prefix, stack.config.nats.replicas);
        await heads.start();
        return new AuditLedger(new AuditRepo(stack.clickhouse), heads, stack.registry, stack.config.audit.chainKey);
      }),
    );
    await Promise.all(
      Array.from({ length: 30 }, (_, i) => ledgers[i % 2]!.append({ orgId: admin.org_id, actor: 'test', action: 'test.append', target: `t${i}` })),
    );
    const verdict = await t.request('GET', '/v1/audit/verify', { key: admin.key });
    expect(verdict.body).toEqual({ valid: true, entries: 31, complete: true, next_cursor: null });
  });

  test('entries cut off the end of the ledger are reported against the recorded head', async () => {
    const admin = await t.mintKey({ role: 'admin' });
    for (let i = 0; i < 3; i += 1) await t.mintKey({ orgId: admin.org_id });
    const db = t.stack.clickhouse.database;
    await t.stack.clickhouse.exec(`ALTER TABLE ${db}.audit_log DELETE WHERE org_id = '${admin.org_id}' AND seq >= 3`);
    // Mutations apply in the background: wait until both entries are gone.
    await waitForMutations(t.stack.clickhouse, 'audit_log');
    const verdict = await t.request('GET', '/v1/audit/verify', { key: admin.key });
    expect(verdict.body).toMatchObject({ valid: false, broken_at: 3, reason: 'the ledger ends before its recorded head' });
  });

  test('a last entry missing from ClickHouse, as after a crash between claim and write, is restored from the head', async () => {
    const admin = await t.mintKey({ role: 'admin' });
    await t.mintKey({ orgId: admin.org_id });
    const db = t.stack.clickhouse.database;
    await t.stack.clickhouse.exec(`ALTER TABLE ${db}.audit_log DELETE WHERE org_id = '${admin.org_id}' AND seq = 2`);
    await waitForMutations(t.stack.clickhouse, 'audit_log');
    const verdict = await t.request('GET', '/v1/audit/verify', { key: admin.key });
    expect(verdict.body).toEqual({ valid: true, entries: 2, complete: true, next_cursor: null });
    expect(await storedCount(t.stack.clickhouse, 'audit_log', orgIs(admin.org_id))).toBe(2);
  });
});

