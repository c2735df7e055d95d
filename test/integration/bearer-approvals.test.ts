import type { AuditEntryView, ErrorBody, IncidentView, Page, ReplayRequested } from '../support/api-types';
import { startTestOidcProvider, type TestOidcProvider } from '../support/oidc-provider';
import { replayInStatus } from '../support/replays';
import { startTestStack, type TestStack } from '../support/test-stack';
import { waitFor } from '../support/wait';

/** A person decides a replay through their bearer token: the decision and its audit entry name them (subject, name, email). */
describe('approving through a bearer token', () => {
  let provider: TestOidcProvider;
  let t: TestStack;
  const frank = { subject: 'frank', name: 'Frank Example', email: 'frank@example.test', groups: ['noc-leads'] };
  const alice = { subject: 'u-5f1c-alice', name: 'Alice Martin', email: 'alice@example.test', groups: ['alice-team'] };

  beforeAll(async () => {
    provider = await startTestOidcProvider({ users: [frank, alice] });
    t = await startTestStack('chdb', {
      ROLES: 'api,stream-workers,temporal-worker',
      WORKER_MAX_WAIT_MS: '20',
      OIDC_ISSUER_URL: provider.issuer,
      OIDC_CLIENT_ID: provider.clientId,
      OIDC_AUDIENCE: provider.audience,
    });
  });
  afterAll(async () => {
    await t?.stop();
    await provider?.stop();
  });

  test('a person approving a replay with their access token is named in the decision and its audit entry', async () => {
    const admin = await t.mintKey({ role: 'admin' });
    const operator = await t.mintKey({ role: 'operator', orgId: admin.org_id });
    await t.request('PUT', '/v1/sso/group-mappings', { key: admin.key, body: { version: 0, mappings: [{ group: 'noc-leads', roles: ['approver'] }] } });
    await t.request('POST', '/v1/policies', { key: operator.key, body: { name: 'a human decides', requires_approval: true } });
    await t.request('POST', '/ingest', { key: operator.key, body: { telemetry: 'bgp', service: 'edge', environment: 'prod', region: 'eu-west-1', latency_ms: 40 } });
    const incident = await waitFor(async () => (await t.request<Page<IncidentView>>('GET', '/v1/incidents', { key: operator.key })).body.data[0]);
    const id = (await t.request<ReplayRequested>('POST', '/v1/replay', { key: operator.key, body: { incident_id: incident.id } })).body.replay_id;
    await replayInStatus(t, operator.key, id, 'awaiting_approval');

    const { access_token } = await provider.tokensFor('frank');
    const whoami = await t.request<{ key_id: string }>('GET', '/v1/whoami', { headers: { authorization: `Bearer ${access_token}` } });
    const approved = await t.request('POST', `/v1/replays/${id}/approve`, { headers: { authorization: `Bearer ${access_token}` }, body: { comment: 'checked' } });
    expect(approved.status).toBe(202);
    const done = await replayInStatus(t, operator.key, id, 'completed');
    const person = { subject: frank.subject, name: frank.name, email: frank.email };
    expect(done.approvals).toEqual([expect.objectContaining({ decision: 'approve', approver_key_id: whoami.body.key_id, person })]);
    const entry = await waitFor(async () => {
      const ledger = await t.request<Page<AuditEntryView>>('GET', '/v1/audit?limit=20', { key: admin.key });
      return ledger.body.data.find((e) => e.action === 'replay.approve' && e.target === id);
    });
    expect(entry.actor).toBe(whoami.body.key_id);
    expect(entry.actor_person).toEqual(person);
  });

  /** A replay of `orgId` that waits for an approver, requested with `requesterKey`, under a policy `policyKey` wrote. */
  async function waitingReplay(policyKey: string, requesterKey: string) {
    expect((await t.request('POST', '/v1/policies', { key: policyKey, body: { name: 'a human decides', requires_approval: true } })).status).toBe(201);
    await t.request('POST', '/ingest', { key: requesterKey, body: { telemetry: 'bgp', service: 'core', environment: 'prod', region: 'eu-west-1', latency_ms: 40 } });
    const incident = await waitFor(async () => (await t.request<Page<IncidentView>>('GET', '/v1/incidents', { key: requesterKey })).body.data[0]);
    const id = (await t.request<ReplayRequested>('POST', '/v1/replay', { key: requesterKey, body: { incident_id: incident.id } })).body.replay_id;
    await replayInStatus(t, requesterKey, id, 'awaiting_approval');
    return id;
  }

  test("in a workspace that takes keys of persons from sign-ins only, Alice's key is minted through her sign-in, is the same person, and she cannot approve her own replay", async () => {
    const admin = await t.mintKey({ role: 'admin' });
    await t.request('PUT', '/v1/sso/group-mappings', { key: admin.key, body: { version: 0, mappings: [{ group: 'alice-team', roles: ['admin', 'approver'] }] } });
    const bound = await t.request<{ person_keys_from_sign_in: boolean }>('PUT', `/v1/workspaces/${admin.org_id}/sso`, { key: t.adminKey, body: { person_keys_from_sign_in: true } });
    expect([bound.status, bound.body.person_keys_from_sign_in]).toEqual([200, true]);

    // Nobody types Alice in: not even the platform admin, whose "alice" would be a second Alice beside the provider's subject.
    const typed = await t.request<ErrorBody>('POST', '/v1/api-keys', { key: t.adminKey, body: { org_id: admin.org_id, role: 'operator', owner: { subject: 'alice' } } });
    expect([typed.status, typed.body.error.message]).toEqual([403, expect.stringContaining('person_keys_from_sign_in') as unknown]);

    const bearer = { authorization: `Bearer ${(await provider.tokensFor(alice.subject)).access_token}` };
    const minted = await t.request<{ key: string; owner: unknown }>('POST', '/v1/api-keys', { headers: bearer, body: { role: 'operator' } });
    const person = { subject: alice.subject, name: alice.name, email: alice.email };
    expect([minted.status, minted.body.owner]).toEqual([201, person]);
    // Her key is a key, not a sign-in: it mints no key of a person there either.
    const fromKey = await t.request<ErrorBody>('POST', '/v1/api-keys', { key: minted.body.key, body: { role: 'approver' } });
    expect(fromKey.status).toBe(403);

    const id = await waitingReplay(admin.key, minted.body.key);
    const own = await t.request<ErrorBody>('POST', `/v1/replays/${id}/approve`, { headers: bearer });
    expect([own.status, own.body.error.message]).toEqual([403, expect.stringContaining('person who requested it') as unknown]);
    await replayInStatus(t, minted.body.key, id, 'awaiting_approval');
  });
});
