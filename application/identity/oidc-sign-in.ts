import { Issuer, custom, errors, generators, type BaseClient, type CallbackParamsType, type IdTokenClaims } from 'openid-client';
import { AppError, unavailable } from '../../core/errors';
import { personOfClaims, type Person } from '../../core/person';
import type { LoginAttempt } from '../../core/session';
import { counter, type Registry } from '../../observability/metrics';

/** A person as the provider vouched for them at sign-in, with the groups its ID token named. */
export interface SignedInPerson {
  person: Person;
  groups: string[];
}

/** What the sign-in needs of the OpenID settings (application/identity/oidc.config.ts). */
export interface OidcSignInConfig {
  issuerUrl: string;
  clientId: string;
  clientSecret: string | undefined;
  groupsClaim: string;
  clockToleranceSeconds: number;
}

/** The path the provider sends people back to, under the console's public base. */
export const callbackPath = '/auth/callback';

/** How long a call to the provider (discovery, the token endpoint, its keys) may take. */
const providerTimeoutMs = 5_000;

/** The groups claim as a list: providers send a list of strings, or one string. */
export function groupsOf(claims: Record<string, unknown>, claim: string): string[] {
  const value = claims[claim];
  const list = typeof value === 'string' ? [value] : Array.isArray(value) ? value : [];
  return list.filter((g): g is string => typeof g === 'string' && g.length > 0 && g.length <= 512).slice(0, 1000);
}

/**
 * The console's sign-in at the OpenID provider, as a relying party (openid-client):
 * authorization code with PKCE (S256), state and nonce; the code exchanged and
 * the ID token validated (signature against the provider's keys, issuer,
 * audience, expiry, nonce) by openid-client; RP-initiated logout where the
 * provider offers it. The provider is discovered on first use, not at start:
 * a provider that is down delays sign-in (503), never the API's start.
 */
export class OidcSignIn {
  private discovered?: Promise<BaseClient>;
  private readonly failures;

  constructor(private readonly deps: { config: OidcSignInConfig; redirectBaseUrl: string; scopes: string; registry: Registry }) {
    this.failures = counter(deps.registry, {
      name: 'nettel_oidc_sign_in_failures_total',
      help: 'Console sign-ins through the OpenID provider that failed, by reason (provider_error, invalid_response, unavailable)',
      labelNames: ['reason'] as const,
    });
  }

  get redirectUri(): string {
    return `${this.deps.redirectBaseUrl}${callbackPath}`;
  }

  private client(): Promise<BaseClient> {
    this.discovered ??= this.discover().catch((err: unknown) => {
      // A failed discovery is tried again by the next sign-in.
      this.discovered = undefined;
      this.failures.inc({ reason: 'unavailable' });
      throw unavailable('the OpenID provider', err);
    });
    return this.discovered;
  }

  private async discover(): Promise<BaseClient> {
    custom.setHttpOptionsDefaults({ timeout: providerTimeoutMs });
    const issuer = await Issuer.discover(this.deps.config.issuerUrl);
    const { clientId, clientSecret, clockToleranceSeconds } = this.deps.config;
    const client = new issuer.Client({
      client_id: clientId,
      ...(clientSecret ? { client_secret: clientSecret, token_endpoint_auth_method: 'client_secret_basic' } : { token_endpoint_auth_method: 'none' }),
      redirect_uris: [this.redirectUri],
      response_types: ['code'],
    });
    client[custom.clock_tolerance] = clockToleranceSeconds;
    return client;
  }

  /** Where to send the browser, and what the callback must check the answer against. */
  async authorizationRequest(): Promise<{ url: string; attempt: Omit<LoginAttempt, 'created_at'> }> {
    const client = await this.client();
    const attempt = { state: generators.state(), nonce: generators.nonce(), code_verifier: generators.codeVerifier() };
    const url = client.authorizationUrl({
      scope: this.deps.scopes,
      state: attempt.state,
      nonce: attempt.nonce,
      code_challenge: generators.codeChallenge(attempt.code_verifier),
      code_challenge_method: 'S256',
    });
    return { url, attempt };
  }

  /** The person the provider's answer names, once the code is exchanged and the ID token checked. */
  async callback(params: CallbackParamsType, attempt: LoginAttempt): Promise<SignedInPerson> {
    const client = await this.client();
    let claims: IdTokenClaims;
    try {
      const tokens = await client.callback(this.redirectUri, params, { state: attempt.state, nonce: attempt.nonce, code_verifier: attempt.code_verifier, response_type: 'code' });
      claims = tokens.claims();
    } catch (err) {
      throw this.signInFailure(err);
    }
    const person = personOfClaims(claims);
    if (!person) {
      this.failures.inc({ reason: 'invalid_response' });
      throw new AppError('UNAUTHORIZED', "the OpenID provider's ID token names no subject a person may have (at most 255 characters)");
    }
    return { person, groups: groupsOf(claims, this.deps.config.groupsClaim) };
  }

  private signInFailure(err: unknown): AppError {
    if (err instanceof errors.OPError) {
      this.failures.inc({ reason: 'provider_error' });
      // The provider's own words (access_denied, invalid_grant) are for the person who tried.
      return new AppError('UNAUTHORIZED', `the OpenID provider refused the sign-in: ${err.error ?? 'error'}`, { cause: err });
    }
    if (err instanceof errors.RPError) {
      this.failures.inc({ reason: 'invalid_response' });
      return new AppError('UNAUTHORIZED', "the OpenID provider's answer did not pass its checks; sign in again", { cause: err });
    }
    if (err instanceof AppError) return err;
    this.failures.inc({ reason: 'unavailable' });
    return unavailable('the OpenID provider', err);
  }

  /**
   * RP-initiated logout at the provider, where it offers one: null otherwise.
   * It names the client (`client_id`, which RP-Initiated Logout 1.0 accepts in
   * place of `id_token_hint`), not the person's ID token: sessions keep no
   * token anyone could replay, and the provider asks the person to confirm.
   */
  async logoutUrl(): Promise<string | null> {
    const client = await this.client().catch(() => undefined);
    if (!client?.issuer.metadata.end_session_endpoint) return null;
    return client.endSessionUrl({ client_id: this.deps.config.clientId, post_logout_redirect_uri: `${this.deps.redirectBaseUrl}/` });
  }
}

