import { loadConfig } from '../../service/config';

const base = { ADMIN_API_KEY: 'a'.repeat(32) };

describe('single sign-on settings', () => {
  it('leave single sign-on off when no issuer is set', () => {
    expect(loadConfig(base).oidc).toBeUndefined();
  });

  it('take the client id as the audience when none is given, and keep sessions at 30 minutes idle and 12 hours at most', () => {
    const config = loadConfig({ ...base, OIDC_ISSUER_URL: 'https://idp.example.test', OIDC_CLIENT_ID: 'nettel', OIDC_REDIRECT_BASE_URL: 'https://nettel.example.test/' });
    expect(config.oidc).toMatchObject({ issuerUrl: 'https://idp.example.test', audience: 'nettel', groupsClaim: 'groups', redirectBaseUrl: 'https://nettel.example.test' });
    expect(config.sessions).toEqual({ idleMinutes: 30, maxHours: 12, signInsMaxBytes: 8 * 1024 * 1024 });
  });

  it('refuse an issuer without a client id', () => {
    expect(() => loadConfig({ ...base, OIDC_ISSUER_URL: 'https://idp.example.test' })).toThrow(/OIDC_CLIENT_ID/);
  });

  it('refuse an issuer that is no http(s) address', () => {
    expect(() => loadConfig({ ...base, OIDC_ISSUER_URL: 'idp.example.test', OIDC_CLIENT_ID: 'nettel' })).toThrow(/OIDC_ISSUER_URL/);
  });
});
