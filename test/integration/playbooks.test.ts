import { randomInt } from 'node:crypto';
import type { AuditEntryView, ErrorBody, Page, PlaybooksView } from '../support/api-types';
import { PlaybooksRepo } from '../../storage/playbooks-repo';
import { countingClickHouse } from '../support/counting-clickhouse';
import { startTestStack, transports, type TestStack } from '../support/test-stack';

/** A /24 no other workspace of the file has: workspaces' approved prefixes may not overlap. */
const block = randomInt(256);
let blocks = 0;
const freshBlock = () => `10.${block}.${blocks++}.0/24`;

const webhookOnly = (id: string) => ({ id, name: `playbook ${id}`, actions: [{ type: 'webhook' }] });

describe.each(transports)('playbooks per workspace on %s', (transport) => {
  let t: TestStack;
  beforeAll(async () => {
    t = await startTestStack(transport, { ROLES: 'api', BGP_ALLOWED_COMMUNITIES: '65010:1', BGP_ALLOWED_NEXT_HOPS: '192.0.2.9' });
  });
  afterAll(async () => {
    await t.stop();
  });

  const get = (key: string, path = '/v1/playbooks') => t.request<PlaybooksView & ErrorBody>('GET', path, { key });
  const put = (key: string, body: unknown) => t.request<PlaybooksView & ErrorBody>('PUT', '/v1/playbooks', { key, body });

  /** A workspace with an admin key, an operator key and one approved prefix. */
  async function workspace() {
    const admin = await t.mintKey({ role: 'admin' });
    const operator = await t.mintKey({ role: 'operator', orgId: admin.org_id });
    const prefix = freshBlock();
    const declared = await t.request<{ id: string }>('POST', '/v1/prefixes', { key: admin.key, body: { prefix } });
    expect((await t.request('POST', `/v1/prefixes/${declared.body.id}/approve`, { key: t.adminKey })).status).toBe(200);
    return { admin, operator, prefix };
  }

  test('a workspace reads version 0 with no playbook, sets the next version with defaults filled, and reads every version back', async () => {
    const { operator, prefix } = await workspace();
    const initial = await get(operator.key);
    expect(initial.body).toEqual({ version: 0, playbooks: [], updated_at: null, updated_by: null });

    const flood = {
      id: 'udp-flood',
      name: 'Rate-limit UDP floods',
      match: { rules: ['traffic_volume'], destinations: [prefix] },
      actions: [{ type: 'flowspec_rate_limit', duration_minutes: 60, rate_bytes_per_second: 12_500_000, protocols: ['udp'], destination_ports: [443] }],
    };
    const changed = await put(operator.key, { playbooks: [flood] });
    expect(changed.status).toBe(200);
    expect(changed.body).toEqual({
      version: 1,
      updated_at: expect.any(String) as unknown,
      updated_by: operator.key_id,
      playbooks: [{
        ...flood,
        enabled: true,
        match: { rules: ['traffic_volume'], kinds: [], severities: [], environments: [], services: [], destinations: [prefix] },
        actions: [{ ...flood.actions[0], protocols: [17], source_ports: [], tcp_flags: [], packet_length: null }],
      }],
    });
    expect((await put(operator.key, { playbooks: changed.body.playbooks })).body.version).toBe(1);
    expect((await get(operator.key)).body).toEqual(changed.body);
    expect((await get(operator.key, '/v1/playbooks/versions/1')).body).toEqual(changed.body);
    expect((await get(operator.key, '/v1/playbooks/versions/0')).body).toEqual(initial.body);
    expect((await get(operator.key, '/v1/playbooks/versions/2')).status).toBe(404);
  });

  test('a change is audited as playbooks.update with its version and the playbook ids', async () => {
    const { operator } = await workspace();
    await put(operator.key, { playbooks: [webhookOnly('a')] });
    await put(operator.key, { playbooks: [webhookOnly('a'), webhookOnly('b')] });
    const audit = (await t.request<Page<AuditEntryView>>('GET', '/v1/audit', { key: operator.key })).body.data;
    expect(audit.filter((e) => e.action === 'playbooks.update').map((e) => [e.target, e.actor, e.details])).toEqual([
      ['v2', operator.key_id, { version: 2, previous_version: 1, playbooks: ['a', 'b'] }],
      ['v1', operator.key_id, { version: 1, previous_version: 0, playbooks: ['a'] }],
    ]);
  });

  test('the document GET answers is accepted back by PUT, its version guarding against a concurrent change (409 when stale)', async () => {
    const { operator } = await workspace();
    const read = (await get(operator.key)).body;
    const edited = await put(operator.key, { ...read, playbooks: [webhookOnly('first')] });
    expect(edited.body).toMatchObject({ version: 1, playbooks: [{ id: 'first' }] });
    const stale = await put(operator.key, { ...read, playbooks: [webhookOnly('second')] });
    expect(stale.status).toBe(409);
    expect(stale.body.error.code).toBe('CONFLICT');
    expect((await put(operator.key, { ...edited.body, playbooks: [webhookOnly('second')] })).body.version).toBe(2);
  });

  test("a destination outside the workspace's approved prefixes is 400 naming it, and nothing is written", async () => {
    const { operator, prefix } = await workspace();
    const outside = { ...webhookOnly('outside'), match: { destinations: [prefix, '192.0.2.0/24'] } };
    const refused = await put(operator.key, { playbooks: [webhookOnly('inside'), outside] });
    expect(refused.status).toBe(400);
    expect(refused.body.error.details).toEqual([{ path: 'playbooks.1.match.destinations.1', message: "192.0.2.0/24 is outside the workspace's approved prefixes" }]);
    expect((await get(operator.key)).body.version).toBe(0);
  });

  test("an action lasting longer than an active policy's max_duration_minutes is 400 naming it, and nothing is written", async () => {
    const { operator } = await workspace();
    const policy = await t.request<{ id: string }>('POST', '/v1/policies', { key: operator.key, body: { name: 'short', requires_approval: false, max_duration_minutes: 30 } });
    expect(policy.status).toBe(201);
    const long = { id: 'long', name: 'long', actions: [{ type: 'webhook' }, { type: 'flowspec_discard', duration_minutes: 31 }] };
    const refused = await put(operator.key, { playbooks: [long] });
    expect(refused.status).toBe(400);
    expect(refused.body.error.details).toEqual([{ path: 'playbooks.0.actions.1.duration_minutes', message: `31 minutes exceeds policy ${policy.body.id} (short): at most 30` }]);
    expect((await get(operator.key)).body.version).toBe(0);
    expect((await put(operator.key, { playbooks: [{ ...long, actions: [{ type: 'flowspec_discard', duration_minutes: 30 }] }] })).status).toBe(200);
  });

  test("a blackhole's community or next hop the operator did not allow is 400 naming it; the allowed ones pass", async () => {
    const { operator } = await workspace();
    const rtbh = (communities: string[], next_hop: string | null) => ({ id: 'rtbh', name: 'rtbh', actions: [{ type: 'blackhole', duration_minutes: 10, communities, next_hop }] });
    const refused = await put(operator.key, { playbooks: [rtbh(['65010:1', '65000:120'], '203.0.113.66')] });
    expect(refused.status).toBe(400);
    expect(refused.body.error.details?.map((d) => d.path)).toEqual(['playbooks.0.actions.0.communities.1', 'playbooks.0.actions.0.next_hop']);
    expect((await put(operator.key, { playbooks: [rtbh(['65010:1'], '192.0.2.9')] })).status).toBe(200);
  });

  test('invalid playbooks are 400 naming each field', async () => {
    const { operator } = await workspace();
    const bad = await put(operator.key, {
      playbooks: [{ id: 'Bad Id', name: 'x', actions: [{ type: 'blackhole', duration_minutes: 0 }, { type: 'nuke' }] }],
    });
    expect(bad.status).toBe(400);
    expect(bad.body.error.details?.map((d) => d.path).sort()).toEqual(['playbooks.0.actions.0.duration_minutes', 'playbooks.0.actions.1.type', 'playbooks.0.id']);
  });

  test('TCP flags are kept as written, and an unknown one or one beside a protocol other than tcp is 400 naming it', async () => {
    const { operator } = await workspace();
    const synFlood = { type: 'flowspec_discard', duration_minutes: 5, protocols: ['tcp'], tcp_flags: ['syn', 'ack'] };
    expect((await put(operator.key, { playbooks: [{ id: 'syn', name: 'SYN flood', actions: [synFlood] }] })).status).toBe(200);
    expect((await get(operator.key)).body.playbooks[0]!.actions[0]).toMatchObject({ protocols: [6], tcp_flags: ['syn', 'ack'] });
    const bad = await put(operator.key, {
      playbooks: [{ id: 'syn', name: 'SYN flood', actions: [{ ...synFlood, tcp_flags: ['syn', 'xmas'] }, { ...synFlood, protocols: ['udp'] }] }],
    });
    expect(bad.status).toBe(400);
    expect(bad.body.error.details?.map((d) => d.path)).toEqual(['playbooks.0.actions.0.tcp_flags.1', 'playbooks.0.actions.1.tcp_flags']);
  });

  test('a key without playbooks:manage may read the playbooks but not change them', async () => {
    const { operator } = await workspace();
    for (const role of ['analyst', 'approver']) {
      const { key } = await t.mintKey({ role, orgId: operator.org_id });
      expect((await get(key)).status).toBe(200);
      const refused = await put(key, { playbooks: [] });
      expect({ status: refused.status, code: refused.body.error.code }).toEqual({ status: 403, code: 'FORBIDDEN' });
    }
  });

  test('another workspace sees only its own playbooks and versions', async () => {
    const a = await workspace();
    const b = await workspace();
    await put(a.operator.key, { playbooks: [webhookOnly('of-a')] });
    expect((await get(b.operator.key)).body).toMatchObject({ version: 0, playbooks: [] });
    expect((await get(b.operator.key, '/v1/playbooks/versions/1')).status).toBe(404);
    await put(b.operator.key, { playbooks: [webhookOnly('of-b')] });
    expect((await get(a.operator.key)).body.playbooks.map((p) => p.id)).toEqual(['of-a']);
  });

  test('a repository reads a stored version from ClickHouse once and answers it from memory after; a version not stored yet is read again', async () => {
    const { admin, operator } = await workspace();
    const { ch, statements } = countingClickHouse(t.stack.clickhouse);
    const repo = new PlaybooksRepo(ch);
    expect(await repo.version(admin.org_id, 1)).toBeUndefined();
    await put(operator.key, { playbooks: [webhookOnly('kept')] });
    const first = await repo.version(admin.org_id, 1);
    const again = await repo.version(admin.org_id, 1);
    expect([first?.playbooks.map((p) => p.id), again]).toEqual([['kept'], first]);
    expect(statements).toHaveLength(2);
  });

  test('a repository reads the history up to a stored version once; a history past the last stored version is read again', async () => {
    const { admin, operator } = await workspace();
    const { ch, statements } = countingClickHouse(t.stack.clickhouse);
    const repo = new PlaybooksRepo(ch);
    await put(operator.key, { playbooks: [webhookOnly('first')] });
    expect((await repo.versions(admin.org_id, 2)).map((v) => v.version)).toEqual([1]);
    await put(operator.key, { playbooks: [webhookOnly('second')] });
    expect((await repo.versions(admin.org_id, 2)).map((v) => v.version)).toEqual([1, 2]);
    expect((await repo.versions(admin.org_id, 2)).map((v) => v.version)).toEqual([1, 2]);
    expect(statements).toHaveLength(2);
  });
});
