import type { AuditEntryView, ErrorBody, Page } from '../support/api-types';
import { startTestOidcProvider, type TestOidcProvider } from '../support/oidc-provider';
import { startTestStack, type TestStack } from '../support/test-stack';

/**
 * The platform admin requires single sign-on of a workspace's people: their
 * API keys are refused there, while people's tokens keep working; and people's
 * failed tokens count for the failed-auth throttle as bad keys do.
 */
describe('single sign-on required', () => {
  let provider: TestOidcProvider;
  let t: TestStack;

  beforeAll(async () => {
    provider = await startTestOidcProvider({ users: [{ subject: 'erin', name: 'Erin Example', email: 'erin@example.test', groups: ['netops'] }] });
    t = await startTestStack('chdb', {
      OIDC_ISSUER_URL: provider.issuer,
      OIDC_CLIENT_ID: provider.clientId,
      OIDC_AUDIENCE: provider.audience,
      AUTH_FAILURES_PER_MINUTE: '3',
    });
  });
  afterAll(async () => {
    await t?.stop();
    await provider?.stop();
  });

  const requireSso = (orgId: string, required: boolean) =>
    t.request<{ org_id: string; required: boolean; updated_by: string | null }>('PUT', `/v1/workspaces/${orgId}/sso`, { key: t.adminKey, body: { required } });

  test("a person's API key is refused with SSO_REQUIRED once the platform admin requires single sign-on, and works again when no longer", async () => {
    const person = await t.mintKey({ role: 'operator' });
    expect((await t.request('GET', '/v1/incidents', { key: person.key })).status).toBe(200);
    expect((await requireSso(person.org_id, true)).body).toMatchObject({ org_id: person.org_id, required: true, updated_by: 'platform-admin' });
    const refused = await t.request<ErrorBody>('GET', '/v1/incidents', { key: person.key });
    expect(refused.status).toBe(403);
    expect(refused.body.error.code).toBe('SSO_REQUIRED');
    expect(refused.body.error.message).toMatch(/sign in with single sign-on/);
    await requireSso(person.org_id, false);
    expect((await t.request('GET', '/v1/incidents', { key: person.key })).status).toBe(200);
  });

  test('a service key keeps working where single sign-on is required', async () => {
    const person = await t.mintKey({ role: 'operator' });
    const service = await t.mintKey({ role: 'ingest', orgId: person.org_id, owner: 'service' });
    await requireSso(person.org_id, true);
    expect((await t.request('GET', '/v1/incidents', { key: person.key })).status).toBe(403);
    const signal = { telemetry: 'bgp', service: 'edge', environment: 'prod', region: 'eu-west-1', latency_ms: 40 };
    expect((await t.request('POST', '/ingest', { key: service.key, body: signal })).status).toBe(202);
    await requireSso(person.org_id, false);
  });

  test("a person's bearer token keeps working where single sign-on is required", async () => {
    const admin = await t.mintKey({ role: 'admin' });
    await t.request('PUT', '/v1/sso/group-mappings', { key: admin.key, body: { version: 0, mappings: [{ group: 'netops', roles: ['analyst'] }] } });
    await requireSso(admin.org_id, true);
    const { access_token } = await provider.tokensFor('erin');
    expect((await t.request('GET', '/v1/incidents', { headers: { authorization: `Bearer ${access_token}` } })).status).toBe(200);
    await requireSso(admin.org_id, false);
  });

  test("the requirement is audited in the workspace's ledger and read back by the platform admin only", async () => {
    const admin = await t.mintKey({ role: 'admin' });
    await requireSso(admin.org_id, true);
    const read = await t.request<{ required: boolean }>('GET', `/v1/workspaces/${admin.org_id}/sso`, { key: t.adminKey });
    expect(read.body.required).toBe(true);
    expect((await t.request('GET', `/v1/workspaces/${admin.org_id}/sso`, { key: admin.key })).status).toBe(403);
    const ledger = await t.request<Page<AuditEntryView>>(`GET`, `/v1/audit?org_id=${admin.org_id}&limit=5`, { key: t.adminKey });
    expect(ledger.body.data.find((e) => e.action === 'sso.requirement.update')).toMatchObject({ actor: 'platform-admin', target: admin.org_id, details: { required: true } });
    await requireSso(admin.org_id, false);
  });

  test("people's refused tokens count for the failed-auth throttle: past the allowance a client is answered 429", async () => {
    const forged = await provider.signToken('erin', {}, { key: await provider.foreignKey(provider.signingKey.kid) });
    const statuses: number[] = [];
    for (let i = 0; i < 5; i += 1) {
      // Every call comes from loopback, one client address: this test runs last, so its failures lock out no other.
      statuses.push((await t.request('GET', '/v1/whoami', { headers: { authorization: `Bearer ${forged}` } })).status);
    }
    expect(statuses.slice(0, 3)).toEqual([401, 401, 401]);
    expect(statuses.slice(3)).toEqual([429, 429]);
  });
});
