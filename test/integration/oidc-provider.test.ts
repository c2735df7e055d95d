import { createRemoteJWKSet, decodeJwt, decodeProtectedHeader, jwtVerify } from 'jose';
import { startTestOidcProvider, type TestOidcProvider } from '../support/oidc-provider';

/** The tests' OpenID provider itself: what the identity tests rely on it for. */
describe('the test OpenID provider', () => {
  let provider: TestOidcProvider;
  const alice = { subject: 'alice', name: 'Alice Example', email: 'alice@example.test', groups: ['netops', 'audit'] };

  beforeAll(async () => {
    provider = await startTestOidcProvider({ users: [alice], redirectUris: ['http://127.0.0.1:9/auth/callback'] });
  });
  afterAll(() => provider?.stop());

  it('hands a person signed in over HTTP a JWT access token for the API, signed with its published key', async () => {
    const tokens = await provider.tokensFor('alice');
    const jwks = createRemoteJWKSet(new URL(`${provider.issuer}/jwks`));
    const { payload, protectedHeader } = await jwtVerify(tokens.access_token, jwks, { issuer: provider.issuer, audience: provider.audience });
    expect(protectedHeader).toMatchObject({ alg: 'RS256', kid: provider.signingKey.kid });
    expect(payload).toMatchObject({ sub: 'alice', name: alice.name, email: alice.email, groups: alice.groups });
  });

  it("puts the person's groups in the ID token", async () => {
    const tokens = await provider.tokensFor('alice');
    expect(decodeJwt(tokens.id_token)).toMatchObject({ sub: 'alice', groups: alice.groups, aud: provider.clientId });
  });

  it('signs tokens of its own key that verify against its published keys', async () => {
    const token = await provider.signToken('alice', { iss: 'https://elsewhere.test' });
    const { payload } = await jwtVerify(token, createRemoteJWKSet(new URL(`${provider.issuer}/jwks`)));
    expect(payload.iss).toBe('https://elsewhere.test');
  });

  it('publishes a new signing key beside the old one after a rotation, on the same issuer', async () => {
    const before = provider.signingKey;
    const issuer = provider.issuer;
    const rotated = await provider.rotateKey();
    const published = (await (await fetch(`${issuer}/jwks`)).json()) as { keys: { kid: string }[] };
    expect(published.keys.map((k) => k.kid)).toEqual([rotated.kid, before.kid]);
    const tokens = await provider.tokensFor('alice');
    expect(decodeProtectedHeader(tokens.access_token).kid).toBe(rotated.kid);
  });
});
