// The tests' OpenID provider: oidc-provider 9.13 (ESM only, so a child process of its own, not
// inside Jest) on 127.0.0.1. Started by test/support/oidc-provider.ts with the path of a JSON file:
// { port, keys: [private JWK, ...], cookieKeys, users, client, audience, accessTokenTtlSeconds }.
// Prints one line `{"listening": "<issuer>"}` on stdout once it answers, and stops on SIGTERM.
import fs from 'node:fs';
import http from 'node:http';
import Provider, { errors } from 'oidc-provider';

const settings = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
const usersBySubject = new Map(settings.users.map((user) => [user.subject, user]));
const scopes = ['openid', 'profile', 'email', 'groups', 'offline_access'];

/** A person's claims as the provider hands them out: the standard ones, and their groups. */
function claimsOf(user) {
  return { sub: user.subject, name: user.name, email: user.email, email_verified: true, groups: user.groups };
}

async function findAccount(_ctx, subject) {
  const user = usersBySubject.get(subject);
  if (!user) return undefined;
  return { accountId: subject, claims: async () => claimsOf(user) };
}

// The API is the one resource server: every access token is a JWT for it (aud = settings.audience).
const resourceIndicators = {
  enabled: true,
  defaultResource: () => settings.audience,
  useGrantedResource: () => true,
  getResourceServerInfo(_ctx, resource) {
    if (resource !== settings.audience) throw new errors.InvalidTarget();
    return {
      scope: 'api',
      audience: settings.audience,
      accessTokenTTL: settings.accessTokenTtlSeconds,
      accessTokenFormat: 'jwt',
      jwt: { sign: { alg: 'RS256' } },
    };
  },
};

// A first-party client: the person's grant is made at sign-in, with no consent screen to click through.
async function loadExistingGrant(ctx) {
  const grantId = ctx.oidc.result?.consent?.grantId || ctx.oidc.session.grantIdFor(ctx.oidc.client.clientId);
  if (grantId) return ctx.oidc.provider.Grant.find(grantId);
  const grant = new ctx.oidc.provider.Grant({ clientId: ctx.oidc.client.clientId, accountId: ctx.oidc.session.accountId });
  grant.addOIDCScope(scopes.join(' '));
  grant.addResourceScope(settings.audience, 'api');
  await grant.save();
  return grant;
}

// The person's name, email and groups ride in the access token too: the API reads them from the bearer token alone.
async function extraTokenClaims(ctx, token) {
  if (token.kind !== 'AccessToken' || !token.accountId) return undefined;
  const user = usersBySubject.get(token.accountId);
  if (!user) return undefined;
  const { name, email, groups } = claimsOf(user);
  return { name, email, groups };
}

function providerFor(issuer) {
  return new Provider(issuer, {
    clients: [settings.client],
    jwks: { keys: settings.keys },
    cookies: { keys: settings.cookieKeys },
    findAccount,
    scopes,
    claims: { openid: ['sub'], profile: ['name'], email: ['email', 'email_verified'], groups: ['groups'] },
    // Else `groups` stays out of the ID token, and the console reads it there.
    conformIdTokenClaims: false,
    features: { devInteractions: { enabled: true }, resourceIndicators, rpInitiatedLogout: { enabled: true } },
    pkce: { required: () => true },
    loadExistingGrant,
    extraTokenClaims,
    ttl: { AccessToken: settings.accessTokenTtlSeconds, IdToken: settings.accessTokenTtlSeconds, Session: 3600, Interaction: 600, Grant: 3600 },
  });
}

const server = http.createServer();
server.listen(settings.port, '127.0.0.1', () => {
  const issuer = `http://127.0.0.1:${server.address().port}`;
  const provider = providerFor(issuer);
  server.on('request', provider.callback());
  process.stdout.write(`${JSON.stringify({ listening: issuer })}\n`);
});
process.on('SIGTERM', () => {
  server.close(() => process.exit(0));
  server.closeAllConnections();
});
