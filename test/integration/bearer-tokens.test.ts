import { createPublicKey } from 'node:crypto';
import { SignJWT, decodeJwt, decodeProtectedHeader } from 'jose';
import type { AuditEntryView, ErrorBody, Page } from '../support/api-types';
import { startTestOidcProvider, type TestOidcProvider } from '../support/oidc-provider';
import { startTestStack, type TestStack } from '../support/test-stack';

/**
 * People's bearer tokens against a real OpenID provider (oidc-provider in a
 * child process): the provider's access tokens are taken in the workspaces
 * their groups map to, and every kind of bad token is refused, counted and
 * audited as a failed sign-in.
 */
const users = [
  { subject: 'alice', name: 'Alice Example', email: 'alice@example.test', groups: ['netops'] },
  { subject: 'bob', name: 'Bob Example', email: 'bob@example.test', groups: ['readers'] },
  { subject: 'carol', name: 'Carol Example', email: 'carol@example.test', groups: ['netops', 'partner-noc'] },
  { subject: 'dave', name: 'Dave Example', email: 'dave@example.test', groups: ['unmapped'] },
];

interface WhoamiView {
  org_id: string;
  key_id: string;
  roles: string[];
  via: string;
  person: { subject: string; name: string; email: string } | null;
}

describe('people’s bearer tokens', () => {
  let provider: TestOidcProvider;
  let t: TestStack;
  let home: { key: string; org_id: string };
  let partner: { key: string; org_id: string };

  beforeAll(async () => {
    provider = await startTestOidcProvider({ users });
    t = await startTestStack('chdb', {
      OIDC_ISSUER_URL: provider.issuer,
      OIDC_CLIENT_ID: provider.clientId,
      OIDC_CLIENT_SECRET: provider.clientSecret,
      OIDC_AUDIENCE: provider.audience,
      // A rotated key is followed at the first token signed with it.
      OIDC_JWKS_COOLDOWN_SECONDS: '0',
    });
    home = await t.mintKey({ role: 'admin' });
    partner = await t.mintKey({ role: 'admin' });
    const map = (key: string, mappings: unknown) => t.request('PUT', '/v1/sso/group-mappings', { key, body: { version: 0, mappings } });
    expect((await map(home.key, [{ group: 'netops', roles: ['operator'] }, { group: 'readers', roles: ['analyst'] }])).status).toBe(200);
    expect((await map(partner.key, [{ group: 'partner-noc', roles: ['analyst'] }])).status).toBe(200);
  });
  afterAll(async () => {
    await t?.stop();
    await provider?.stop();
  });

  const asPerson = (token: string, route: string, headers: Record<string, string> = {}) =>
    t.request<WhoamiView & ErrorBody>('GET', route, { headers: { authorization: `Bearer ${token}`, ...headers } });

  test("a person's access token from the provider reads the workspace their group maps to, as that person", async () => {
    const { access_token } = await provider.tokensFor('alice');
    const whoami = await asPerson(access_token, '/v1/whoami');
    expect(whoami.status).toBe(200);
    expect(whoami.body).toMatchObject({ org_id: home.org_id, roles: ['operator'], via: 'bearer', person: { subject: 'alice', name: 'Alice Example', email: 'alice@example.test' } });
    expect(whoami.body.key_id).toMatch(/^bearer:[0-9a-f]{16}$/);
    expect((await asPerson(access_token, '/v1/incidents')).status).toBe(200);
  });

  test("a person's token is refused in a workspace where none of their groups is mapped", async () => {
    const { access_token } = await provider.tokensFor('alice');
    const elsewhere = await asPerson(access_token, '/v1/incidents', { 'x-nettel-workspace': partner.org_id });
    expect(elsewhere.status).toBe(403);
    expect(elsewhere.body.error.code).toBe('FORBIDDEN');
  });

  test('the roles a person holds are those the mappings give their groups', async () => {
    const { access_token } = await provider.tokensFor('bob');
    expect((await asPerson(access_token, '/v1/incidents')).status).toBe(200);
    const create = await t.request<ErrorBody>('POST', '/v1/policies', { headers: { authorization: `Bearer ${access_token}` }, body: { name: 'x', requires_approval: false } });
    expect(create.status).toBe(403);
  });

  test('a person of several workspaces names one in X-Nettel-Workspace, and naming none is 400 naming the header', async () => {
    const { access_token } = await provider.tokensFor('carol');
    const ambiguous = await asPerson(access_token, '/v1/whoami');
    expect(ambiguous.status).toBe(400);
    expect(ambiguous.body.error.details).toEqual([expect.objectContaining({ path: 'X-Nettel-Workspace' })]);
    const chosen = await asPerson(access_token, '/v1/whoami', { 'x-nettel-workspace': partner.org_id });
    expect(chosen.body).toMatchObject({ org_id: partner.org_id, roles: ['analyst'] });
  });

  test('a person whose groups are mapped in no workspace is 403', async () => {
    const { access_token } = await provider.tokensFor('dave');
    expect((await asPerson(access_token, '/v1/whoami')).status).toBe(403);
  });

  test('a malformed X-Nettel-Workspace is 400 naming it', async () => {
    const { access_token } = await provider.tokensFor('alice');
    const bad = await asPerson(access_token, '/v1/whoami', { 'x-nettel-workspace': 'not an org!' });
    expect(bad.status).toBe(400);
    expect(bad.body.error.details).toEqual([expect.objectContaining({ path: 'X-Nettel-Workspace' })]);
  });

  test('a token that does not verify is 401 whatever X-Nettel-Workspace says', async () => {
    const forged = await provider.signToken('alice', {}, { key: await provider.foreignKey(provider.signingKey.kid) });
    expect((await asPerson(forged, '/v1/whoami', { 'x-nettel-workspace': 'not an org!' })).status).toBe(401);
  });

  const unsigned = (claims: Record<string, unknown>) =>
    `${Buffer.from(JSON.stringify({ alg: 'none', typ: 'JWT' })).toString('base64url')}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}.`;
  const now = () => Math.floor(Date.now() / 1000);
  const hostile: Array<[string, string, () => Promise<string>]> = [
    ['a wrong issuer', 'issuer', () => provider.signToken('alice', { iss: 'https://evil.example' })],
    ['a wrong audience', 'audience', () => provider.signToken('alice', { aud: 'https://another-api.example' })],
    ['alg none', 'algorithm', () => Promise.resolve(unsigned({ iss: provider.issuer, aud: provider.audience, sub: 'alice', exp: now() + 300, groups: ['netops'] }))],
    [
      'HS256 signed with the public key as the secret',
      'algorithm',
      async () => {
        const publicPem = createPublicKey({ key: provider.signingKey.publicJwk as never, format: 'jwk' }).export({ type: 'spki', format: 'pem' });
        const secret = new TextEncoder().encode(String(publicPem));
        return new SignJWT({ sub: 'alice', groups: ['netops'] })
          .setProtectedHeader({ alg: 'HS256', kid: provider.signingKey.kid })
          .setIssuer(provider.issuer)
          .setAudience(provider.audience)
          .setExpirationTime('5m')
          .sign(secret);
      },
    ],
    ['an expired token', 'expired', () => provider.signToken('alice', { iat: now() - 7200, exp: now() - 3600 })],
    ['a forged signature', 'signature', async () => provider.signToken('alice', {}, { key: await provider.foreignKey(provider.signingKey.kid) })],
    ['an unknown key id', 'unknown_key', async () => provider.signToken('alice', {}, { key: await provider.foreignKey('nobody-knows-this-kid') })],
    ['a token with no sub', 'no_subject', () => provider.signToken('alice', { sub: undefined })],
  ];

  test.each(hostile)('%s is refused with 401, counted by reason and audited as a failed sign-in', async (_name, reason, token) => {
    const metric = () => t.stack.registry.getSingleMetric('nettel_sign_in_failures_total')?.get();
    const before = (await metric())?.values.find((v) => v.labels.reason === reason)?.value ?? 0;
    const refused = await asPerson(await token(), '/v1/incidents');
    expect(refused.status).toBe(401);
    expect(refused.body.error.code).toBe('UNAUTHORIZED');
    expect((await metric())?.values.find((v) => v.labels.reason === reason)?.value).toBe(before + 1);
    const ledger = await t.request<Page<AuditEntryView>>('GET', '/v1/audit?org_id=_platform&limit=1', { key: t.adminKey });
    expect(ledger.body.data[0]).toMatchObject({ action: 'sign_in.failure', actor: 'anonymous', target: reason, details: { via: 'bearer', reason } });
  });

  test('a token signed with a key the provider rotated to is followed', async () => {
    await provider.rotateKey();
    const { access_token } = await provider.tokensFor('alice');
    expect((await asPerson(access_token, '/v1/whoami')).status).toBe(200);
  });
});

describe('an ID token presented as a bearer token', () => {
  let provider: TestOidcProvider;
  let t: TestStack;

  beforeAll(async () => {
    provider = await startTestOidcProvider({ users });
    // No OIDC_AUDIENCE: bearer tokens must name the client id, which is the audience of the provider's ID tokens.
    t = await startTestStack('clickhouse-server', {
      ROLES: 'api',
      OIDC_ISSUER_URL: provider.issuer,
      OIDC_CLIENT_ID: provider.clientId,
      OIDC_CLIENT_SECRET: provider.clientSecret,
    });
    const admin = await t.mintKey({ role: 'admin' });
    const mapped = await t.request('PUT', '/v1/sso/group-mappings', { key: admin.key, body: { version: 0, mappings: [{ group: 'netops', roles: ['operator'] }] } });
    expect(mapped.status).toBe(200);
  });
  afterAll(async () => {
    await t?.stop();
    await provider?.stop();
  });

  test('is refused with 401 with the audience at its default, counted and audited as an ID token', async () => {
    const { id_token, access_token } = await provider.tokensFor('alice');
    // The provider's ID token names the client as its audience, and carries the nonce and at_hash of a sign-in.
    expect(decodeJwt(id_token)).toMatchObject({ aud: provider.clientId, sub: 'alice', nonce: expect.any(String) as unknown });
    expect(decodeProtectedHeader(access_token).typ).toBe('at+jwt');
    const refused = await t.request<ErrorBody>('GET', '/v1/incidents', { headers: { authorization: `Bearer ${id_token}` } });
    expect([refused.status, refused.body.error.code]).toEqual([401, 'UNAUTHORIZED']);
    const failures = (await t.stack.registry.getSingleMetric('nettel_sign_in_failures_total')?.get())?.values ?? [];
    expect(failures.find((v) => v.labels.reason === 'id_token')?.value).toBe(1);
    const ledger = await t.request<Page<AuditEntryView>>('GET', '/v1/audit?org_id=_platform&limit=1', { key: t.adminKey });
    expect(ledger.body.data[0]).toMatchObject({ action: 'sign_in.failure', target: 'id_token', details: { via: 'bearer', reason: 'id_token' } });
  });
});
