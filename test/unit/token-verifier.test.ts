import { TokenVerifier, isIdToken } from '../../application/identity/token-verifier';
import type { OidcConfig } from '../../application/identity/oidc.config';
import type { AppError } from '../../core/errors';

const config: OidcConfig = {
  issuerUrl: 'https://idp.example.test/realms/ops',
  clientId: 'nettel',
  clientSecret: undefined,
  redirectBaseUrl: undefined,
  groupsClaim: 'groups',
  scopes: 'openid profile email groups',
  audience: 'nettel',
  jwksCooldownMs: 30_000,
  clockToleranceSeconds: 30,
};
// Any JWT-shaped token: discovery runs before the token is looked at.
const token = `${Buffer.from('{"alg":"RS256"}').toString('base64url')}.${Buffer.from('{"sub":"a"}').toString('base64url')}.c2ln`;

const failure = (work: Promise<unknown>) => work.then(() => { throw new Error('expected a refusal'); }, (err: AppError) => err);

describe('the token verifier', () => {
  it('answers 503 when the discovery document names another issuer', async () => {
    const verifier = new TokenVerifier(config, () => Promise.resolve({ issuer: 'https://evil.example.test', jwks_uri: 'https://evil.example.test/jwks' }));
    expect((await failure(verifier.verify(token))).code).toBe('UNAVAILABLE');
  });

  it('answers 503 while the provider cannot be reached, and asks it again only after a few seconds', async () => {
    let asked = 0;
    const clock = { now: 0 };
    const verifier = new TokenVerifier(config, () => { asked += 1; return Promise.reject(new Error('connection refused')); }, () => clock.now);
    expect((await failure(verifier.verify(token))).code).toBe('UNAVAILABLE');
    expect((await failure(verifier.verify(token))).code).toBe('UNAVAILABLE');
    expect(asked).toBe(1);
    clock.now = 6_000;
    await failure(verifier.verify(token));
    expect(asked).toBe(2);
  });

  it('refuses a token longer than any provider issues without asking the provider', async () => {
    let asked = 0;
    const verifier = new TokenVerifier(config, () => { asked += 1; return Promise.resolve({}); });
    const refused = await failure(verifier.verify(`eyJ${'A'.repeat(20_000)}.e30.x`));
    expect([refused.code, asked]).toEqual(['UNAUTHORIZED', 0]);
  });
});

describe('what an ID token is', () => {
  const rs = { alg: 'RS256' };
  it.each([
    ['a nonce (oidc-provider, Entra ID, any code flow that sent one)', rs, { sub: 'a', nonce: 'n' }, true],
    ['an at_hash', rs, { sub: 'a', at_hash: 'h' }, true],
    ['a c_hash', { ...rs, typ: 'JWT' }, { sub: 'a', c_hash: 'h' }, true],
    ["Keycloak's typ ID claim", { ...rs, typ: 'JWT' }, { sub: 'a', typ: 'ID' }, true],
    ["Keycloak's or Entra ID's access token", { ...rs, typ: 'JWT' }, { sub: 'a', typ: 'Bearer', scp: 'api' }, false],
    ['an RFC 9068 access token, even with a nonce', { ...rs, typ: 'at+jwt' }, { sub: 'a', nonce: 'n' }, false],
    ['an RFC 9068 access token typed as a media type', { ...rs, typ: 'application/at+JWT' }, { sub: 'a' }, false],
  ])('%s', (_name, header, payload, expected) => {
    expect(isIdToken(header, payload)).toBe(expected);
  });
});
