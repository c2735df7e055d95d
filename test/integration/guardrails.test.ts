import type { AuditEntryView, ErrorBody, GuardrailChangeView, GuardrailSettingsView, Page, PolicyView } from '../support/api-types';
import { startTestStack, testPerson, transports, type MintedTestKey, type TestStack } from '../support/test-stack';

/**
 * Guardrails with two pairs of eyes (issue 32, item 4), on both ClickHouse
 * generations: with the workspace's `four_eyes` on, loosening a guardrail
 * (deactivating or relaxing a policy, enabling a playbook no policy gates,
 * turning the setting off) waits for a second person, as a run does; and a
 * workspace whose playbooks act with no policy gating them is visible.
 */
const stringContaining = (text: string): unknown => expect.stringContaining(text);
const notify = { id: 'notify', name: 'Tell the NOC', match: {}, actions: [{ type: 'webhook' }] };

describe.each(transports)('guardrails with two pairs of eyes on %s', (transport) => {
  let t: TestStack;
  beforeAll(async () => {
    t = await startTestStack(transport, { ROLES: 'api' });
  });
  afterAll(async () => {
    await t.stop();
  });

  /** A workspace: an operator (a person), an approver key of that same person, and an approver who is someone else. */
  async function workspace() {
    const operator = await t.mintKey({ role: 'operator' });
    const ownApprover = await t.mintKey({ role: 'approver', orgId: operator.org_id, owner: operator.owner });
    const otherApprover = await t.mintKey({ role: 'approver', orgId: operator.org_id, owner: testPerson('Second Pair') });
    return { operator, ownApprover, otherApprover };
  }

  const fourEyes = (key: MintedTestKey, on: boolean) => t.request<GuardrailSettingsView & GuardrailChangeView>('PUT', '/v1/guardrails', { key: key.key, body: { four_eyes: on } });
  const decide = (key: MintedTestKey, id: string, decision: 'approve' | 'deny') => t.request<GuardrailChangeView & ErrorBody>('POST', `/v1/guardrail-changes/${id}/${decision}`, { key: key.key });
  const ledger = async (key: MintedTestKey) => (await t.request<Page<AuditEntryView>>('GET', '/v1/audit?limit=100', { key: key.key })).body.data;

  test('with four eyes on, deactivating the approval policy waits for a second person: not its requester with another key, but someone else, and then it applies', async () => {
    const { operator, ownApprover, otherApprover } = await workspace();
    const policy = (await t.request<PolicyView>('POST', '/v1/policies', { key: operator.key, body: { name: 'a human decides', requires_approval: true } })).body;
    expect((await fourEyes(operator, true)).body).toMatchObject({ four_eyes: true });

    const held = await t.request<GuardrailChangeView>('DELETE', `/v1/policies/${policy.id}`, { key: operator.key });
    expect([held.status, held.body.status, held.body.kind, held.body.reasons]).toEqual([202, 'awaiting_approval', 'policy.deactivate', ['the policy is deactivated']]);
    expect(held.body.requested_by_person).toEqual(operator.owner);
    expect((await t.request<PolicyView>('GET', `/v1/policies/${policy.id}`, { key: operator.key })).body.status).toBe('active');

    const own = await decide(ownApprover, held.body.change_id, 'approve');
    expect([own.status, own.body.error.message]).toEqual([403, stringContaining('the person who asked for it')]);
    const approved = await decide(otherApprover, held.body.change_id, 'approve');
    expect([approved.status, approved.body.status, approved.body.decided_by_person]).toEqual([200, 'approved', otherApprover.owner]);
    expect((await t.request<PolicyView>('GET', `/v1/policies/${policy.id}`, { key: operator.key })).body.status).toBe('inactive');
    expect((await decide(otherApprover, held.body.change_id, 'deny')).status).toBe(409);

    // The deactivation is the requester's own change (their person, their cooldown), decided by the other.
    const entries = await ledger(operator);
    expect(entries.find((e) => e.action === 'policy.deactivate' && e.target === policy.id)).toMatchObject({ actor: operator.key_id, actor_person: operator.owner });
    expect(entries.find((e) => e.action === 'guardrail.approve')).toMatchObject({ actor: otherApprover.key_id, actor_person: otherApprover.owner, target: held.body.change_id });
  });

  test('with four eyes on, tightening applies at once, relaxing waits, and a denied change leaves the policy as it was', async () => {
    const { operator, otherApprover } = await workspace();
    await fourEyes(operator, true);
    const created = await t.request<PolicyView>('POST', '/v1/policies', { key: operator.key, body: { name: 'prod only', requires_approval: true, environments: ['prod', 'staging'] } });
    expect(created.status).toBe(201);
    const narrowed = await t.request<PolicyView>('PATCH', `/v1/policies/${created.body.id}`, { key: operator.key, body: { environments: ['prod'] } });
    expect([narrowed.status, narrowed.body.environments]).toEqual([200, ['prod']]);

    const relaxed = await t.request<GuardrailChangeView>('PATCH', `/v1/policies/${created.body.id}`, { key: operator.key, body: { requires_approval: false, environments: [] } });
    expect([relaxed.status, relaxed.body.reasons]).toEqual([202, ['runs no longer wait for an approver', 'more environments are allowed']]);
    expect((await decide(otherApprover, relaxed.body.change_id, 'deny')).body.status).toBe('denied');
    expect((await t.request<PolicyView>('GET', `/v1/policies/${created.body.id}`, { key: operator.key })).body).toMatchObject({ requires_approval: true, environments: ['prod'] });
  });

  test('turning four eyes off is itself a loosening: it waits for a second person', async () => {
    const { operator, otherApprover } = await workspace();
    await fourEyes(operator, true);
    const off = await fourEyes(operator, false);
    expect([off.status, off.body.kind]).toEqual([202, 'guardrails.update']);
    expect((await t.request<GuardrailSettingsView>('GET', '/v1/guardrails', { key: operator.key })).body.four_eyes).toBe(true);
    expect((await decide(otherApprover, off.body.change_id, 'approve')).status).toBe(200);
    expect((await t.request<GuardrailSettingsView>('GET', '/v1/guardrails', { key: operator.key })).body.four_eyes).toBe(false);
  });

  test('a workspace whose playbooks act with no policy gating them is visible: its guardrails answer, its ledger and the platform admin’s /healthz say so', async () => {
    const { operator } = await workspace();
    expect((await t.request('PUT', '/v1/playbooks', { key: operator.key, body: { playbooks: [notify] } })).status).toBe(200);
    expect((await t.request<GuardrailSettingsView>('GET', '/v1/guardrails', { key: operator.key })).body).toMatchObject({ four_eyes: false, ungated: true });
    expect((await ledger(operator)).find((e) => e.action === 'guardrail.ungated')).toMatchObject({ actor: operator.key_id, target: operator.org_id });
    const health = await t.request<{ governance?: { ungated_workspaces: string[] } }>('GET', '/healthz', { key: t.adminKey });
    expect(health.body.governance?.ungated_workspaces).toContain(operator.org_id);
    expect((await t.request<{ governance?: unknown }>('GET', '/healthz')).body.governance).toBeUndefined();

    // With four eyes on, enabling another playbook while nothing gates them waits; once a policy gates them, it does not.
    await fourEyes(operator, true);
    const more = await t.request<GuardrailChangeView>('PUT', '/v1/playbooks', { key: operator.key, body: { playbooks: [notify, { ...notify, id: 'notify-2' }] } });
    expect([more.status, more.body.kind, more.body.reasons]).toEqual([202, 'playbooks.update', [stringContaining('playbook notify-2 acts with no policy gating it')]]);
    expect((await t.request('POST', '/v1/policies', { key: operator.key, body: { name: 'gate', requires_approval: true } })).status).toBe(201);
    expect((await t.request<GuardrailSettingsView>('GET', '/v1/guardrails', { key: operator.key })).body.ungated).toBe(false);
    expect((await t.request('PUT', '/v1/playbooks', { key: operator.key, body: { playbooks: [notify, { ...notify, id: 'notify-2' }] } })).status).toBe(200);
  });
});
