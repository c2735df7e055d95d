import { z } from 'zod';
import { defineSettings, integer, invalidSetting, optionalSecret, optionalText, setting, type SettingValues } from '../../core/settings';

/** An absolute http(s) address that may be left unset (or empty). */
const optionalHttpUrl = (name: string) =>
  optionalText().refine((value) => value === undefined || /^https?:\/\/[^\s]+$/i.test(value), `${name}: an http(s) address`);

/** What the API needs to check a person's tokens and to sign people in; absent when single sign-on is off. */
export interface OidcConfig {
  /** The provider's issuer: its discovery document is `<issuer>/.well-known/openid-configuration`, and tokens name it in `iss`. */
  issuerUrl: string;
  clientId: string;
  clientSecret: string | undefined;
  /** The console's public base; the provider sends people back to `<base>/auth/callback`. */
  redirectBaseUrl: string | undefined;
  /** The claim that lists a person's groups (a list of strings, or one string). */
  groupsClaim: string;
  /** The scopes the console asks for at sign-in (space-separated). */
  scopes: string;
  /** The audience a person's bearer token must name to be taken by the API. */
  audience: string;
  /** Unknown key ids refetch the provider's keys, at most once per this (a flood of made-up key ids must not flood the provider). */
  jwksCooldownMs: number;
  /** Expiry and not-before are checked with this much leeway for clocks that differ. */
  clockToleranceSeconds: number;
}

export interface SessionConfig {
  /** A console session ends after this much time without a request. */
  idleMinutes: number;
  /** A console session ends this long after sign-in, whatever its use. */
  maxHours: number;
  /** The bound in bytes of the sign-ins under way, which unauthenticated requests write. */
  signInsMaxBytes: number;
}

const oidcShape = {
  OIDC_ISSUER_URL: setting(
    optionalHttpUrl('OIDC_ISSUER_URL'),
    "the OpenID provider's issuer URL (its discovery document is `<issuer>/.well-known/openid-configuration`); see [single sign-on](single-sign-on.md)",
    'single sign-on off',
  ),
  OIDC_CLIENT_ID: setting(optionalText(), "the service's client id at the provider; required with `OIDC_ISSUER_URL`"),
  OIDC_CLIENT_SECRET: setting(optionalSecret('OIDC_CLIENT_SECRET', 1), "the client's secret at the provider (the console's sign-in is a confidential client)"),
  OIDC_REDIRECT_BASE_URL: setting(
    optionalHttpUrl('OIDC_REDIRECT_BASE_URL'),
    "the console's public base URL; the redirect URI to register at the provider is `<base>/auth/callback`",
  ),
  OIDC_GROUPS_CLAIM: setting(z.string().trim().min(1).default('groups'), "the token claim listing a person's groups, which the group mappings turn into roles"),
  OIDC_SCOPES: setting(
    z.string().trim().min(1).default('openid profile email groups'),
    "the scopes the console's sign-in asks for (space-separated); drop `groups` for a provider that has no such scope (Entra ID: `openid profile email`)",
  ),
  OIDC_AUDIENCE: setting(optionalText(), 'the audience (`aud`) a bearer token must name for the API to take it', '`OIDC_CLIENT_ID`'),
  OIDC_JWKS_COOLDOWN_SECONDS: setting(
    integer(0, 3_600).default(30),
    "a token signed with a key id the API has not seen refetches the provider's keys (a rotation is followed), at most once per this",
  ),
  OIDC_CLOCK_TOLERANCE_SECONDS: setting(integer(0, 300).default(30), "leeway on a token's expiry and not-before, for clocks that differ"),
  SESSION_IDLE_MINUTES: setting(integer(1, 24 * 60).default(30), 'a console session ends after this many minutes without a request'),
  SESSION_MAX_HOURS: setting(integer(1, 24 * 30).default(12), 'a console session ends this many hours after sign-in, whatever its use'),
  SESSION_SIGN_INS_MAX_BYTES: setting(
    integer(64 * 1024, 1024 ** 3).default(8 * 1024 ** 2),
    'the most the sign-ins under way (`GET /auth/login`, kept 10 minutes) may hold in JetStream; past it, new sign-ins get 503 until older ones expire ([security/http.md](security/http.md))',
  ),
};

/** Single sign-on: the OpenID provider people sign in with, the claims that map them to workspaces, and console sessions. */
export const oidcSettings = defineSettings('Single sign-on (OpenID Connect)', oidcShape, (e) => ({
  /** Single sign-on; undefined when OIDC_ISSUER_URL is unset (API keys only). */
  oidc: oidcConfigOf(e),
  sessions: { idleMinutes: e.SESSION_IDLE_MINUTES, maxHours: e.SESSION_MAX_HOURS, signInsMaxBytes: e.SESSION_SIGN_INS_MAX_BYTES } satisfies SessionConfig,
}));

function oidcConfigOf(e: SettingValues<typeof oidcShape>): OidcConfig | undefined {
  if (!e.OIDC_ISSUER_URL) return undefined;
  if (!e.OIDC_CLIENT_ID) throw invalidSetting('OIDC_CLIENT_ID: required with OIDC_ISSUER_URL');
  return {
    // One form of the issuer: discovery appends its path, and tokens must name it exactly as the provider does.
    issuerUrl: e.OIDC_ISSUER_URL,
    clientId: e.OIDC_CLIENT_ID,
    clientSecret: e.OIDC_CLIENT_SECRET,
    redirectBaseUrl: e.OIDC_REDIRECT_BASE_URL?.replace(/\/+$/, ''),
    groupsClaim: e.OIDC_GROUPS_CLAIM,
    scopes: e.OIDC_SCOPES,
    audience: e.OIDC_AUDIENCE ?? e.OIDC_CLIENT_ID,
    jwksCooldownMs: e.OIDC_JWKS_COOLDOWN_SECONDS * 1000,
    clockToleranceSeconds: e.OIDC_CLOCK_TOLERANCE_SECONDS,
  };
}
