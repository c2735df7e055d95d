import {
  createRemoteJWKSet,
  decodeJwt,
  decodeProtectedHeader,
  errors as jose,
  jwtVerify,
  type JWTHeaderParameters,
  type JWTPayload,
  type JWTVerifyGetKey,
} from 'jose';
import { AppError, unavailable } from '../../core/errors';
import { personOfClaims, type Person } from '../../core/person';
import type { OidcConfig } from './oidc.config';

/** Why a person's token was refused: the label of nettel_sign_in_failures_total and the audit entry's target. */
export type SignInFailureReason =
  | 'malformed'
  | 'algorithm'
  | 'issuer'
  | 'audience'
  | 'expired'
  | 'not_yet_valid'
  | 'signature'
  | 'unknown_key'
  | 'no_subject'
  | 'claims'
  | 'id_token';

/** What a refused token claimed, unverified and cut short: for the audit entry, never trusted. */
export interface ClaimedIdentity {
  iss?: string;
  sub?: string;
  kid?: string;
  alg?: string;
}

/** A person's token the API refuses: 401 UNAUTHORIZED, carrying why (and what it claimed) for the metric and the audit. */
export class SignInFailure extends AppError {
  claimed: ClaimedIdentity = {};

  constructor(readonly reason: SignInFailureReason) {
    super('UNAUTHORIZED', reason === 'expired' ? 'the bearer token has expired: get a new one from the OpenID provider' : 'invalid bearer token');
  }
}

/** A token that verified: who it names, and their groups as the groups claim lists them. */
export interface VerifiedPerson {
  person: Person;
  groups: string[];
}

/**
 * Asymmetric algorithms only: `none` and the HMAC ones never verify a token
 * (an HS256 token "signed" with the provider's public key is the classic
 * confusion), whatever the token's header asks for.
 */
export const allowedAlgorithms = ['RS256', 'PS256', 'ES256', 'EdDSA'];
const maxTokenLength = 16 * 1024;
const maxGroups = 1_000;
const fetchTimeoutMs = 5_000;
/** After a failed discovery, tokens are answered 503 at once for this long: a provider that is down is not asked by every request. */
const discoveryRetryMs = 5_000;

/**
 * Verifies people's access tokens (JWTs) against the OpenID provider: its
 * keys are found through the issuer's discovery document and fetched with
 * jose's remote key set (kept; a key id it has not seen fetches them again,
 * at most once per cooldown, so a rotated key is followed). The issuer,
 * audience, expiry (with a little leeway) and algorithm are checked.
 * Discovery happens on the first token, not at start: a provider that is
 * down must not stop the API, whose keys keep working.
 */
export class TokenVerifier {
  private keys?: Promise<JWTVerifyGetKey>;
  private discoveryFailedAt = -Infinity;

  constructor(
    private readonly config: OidcConfig,
    private readonly fetchJson: (url: string) => Promise<unknown> = fetchJsonWithTimeout,
    private readonly now: () => number = Date.now,
  ) {}

  async verify(token: string): Promise<VerifiedPerson> {
    if (token.length > maxTokenLength) throw new SignInFailure('malformed');
    const keys = await this.keySet();
    let payload: JWTPayload;
    let header: JWTHeaderParameters;
    try {
      ({ payload, protectedHeader: header } = await jwtVerify(token, keys, {
        issuer: this.config.issuerUrl,
        audience: this.config.audience,
        algorithms: allowedAlgorithms,
        clockTolerance: this.config.clockToleranceSeconds,
        requiredClaims: ['sub', 'exp'],
      }));
    } catch (err) {
      throw withClaims(failureOf(err), token);
    }
    if (isIdToken(header, payload)) throw withClaims(new SignInFailure('id_token'), token);
    try {
      return { person: personOf(payload), groups: groupsOf(payload[this.config.groupsClaim]) };
    } catch (err) {
      throw withClaims(err, token);
    }
  }

  /** The provider's key set, found once through discovery; a failed discovery is tried again by the next token. */
  private keySet(): Promise<JWTVerifyGetKey> {
    if (!this.keys) {
      if (this.now() - this.discoveryFailedAt < discoveryRetryMs) return Promise.reject(unavailable('the OpenID provider'));
      const found = this.discover();
      this.keys = found;
      found.catch(() => {
        this.discoveryFailedAt = this.now();
        if (this.keys === found) this.keys = undefined;
      });
    }
    return this.keys;
  }

  private async discover(): Promise<JWTVerifyGetKey> {
    const url = `${this.config.issuerUrl.replace(/\/+$/, '')}/.well-known/openid-configuration`;
    const document = (await this.fetchJson(url).catch((err: unknown) => {
      throw unavailable('the OpenID provider', err);
    })) as { issuer?: unknown; jwks_uri?: unknown };
    // OpenID Connect Discovery 1.0 §4.3: the document must name the issuer it was asked for.
    if (document?.issuer !== this.config.issuerUrl || typeof document.jwks_uri !== 'string') {
      throw unavailable('the OpenID provider (its discovery document names another issuer, or no jwks_uri)');
    }
    return createRemoteJWKSet(new URL(document.jwks_uri), { cooldownDuration: this.config.jwksCooldownMs, timeoutDuration: fetchTimeoutMs });
  }
}

async function fetchJsonWithTimeout(url: string): Promise<unknown> {
  const response = await fetch(url, { signal: AbortSignal.timeout(fetchTimeoutMs), headers: { accept: 'application/json' } });
  if (!response.ok) throw new Error(`${url} answered ${response.status}`);
  return response.json();
}

/** RFC 9068's media type of a JWT access token, which oidc-provider's JWT access tokens carry. */
const accessTokenTypes = new Set(['at+jwt', 'application/at+jwt']);
/** Claims only an ID token carries (OpenID Connect Core 2 and 3.3.2.11; Keycloak marks its ID tokens `typ: "ID"`). */
const idTokenClaims = ['nonce', 'at_hash', 'c_hash', 's_hash'];

/**
 * An ID token says to a client that a person signed in; it is no credential
 * for an API, and with the audience at its default (the client id) it would
 * verify as one: whoever saw it (a log, a proxy, a bucket) could call the API
 * as the person. A token typed as an access token (RFC 9068) passes; any
 * other carrying an ID token's claims is refused, whatever the audience.
 */
export function isIdToken(header: JWTHeaderParameters, payload: JWTPayload): boolean {
  if (typeof header.typ === 'string' && accessTokenTypes.has(header.typ.toLowerCase())) return false;
  return idTokenClaims.some((claim) => claim in payload) || payload.typ === 'ID';
}

const claimReasons: Record<string, SignInFailureReason> = { iss: 'issuer', aud: 'audience', nbf: 'not_yet_valid', sub: 'no_subject', exp: 'expired' };

/** A refusal of jose as the reason it stands for; a provider that cannot be reached is 503, not the token's fault. */
function failureOf(err: unknown): AppError {
  if (err instanceof jose.JWTExpired) return new SignInFailure('expired');
  if (err instanceof jose.JWTClaimValidationFailed) return new SignInFailure(claimReasons[err.claim] ?? 'claims');
  if (err instanceof jose.JOSEAlgNotAllowed) return new SignInFailure('algorithm');
  if (err instanceof jose.JWSSignatureVerificationFailed) return new SignInFailure('signature');
  if (err instanceof jose.JWKSNoMatchingKey || err instanceof jose.JWKSMultipleMatchingKeys) return new SignInFailure('unknown_key');
  if (err instanceof jose.JWKSTimeout) return unavailable('the OpenID provider', err);
  if (err instanceof jose.JOSEError) return new SignInFailure('malformed');
  if (err instanceof AppError) return err;
  // fetch failing to reach the provider's keys.
  return unavailable('the OpenID provider', err);
}

const claimedText = (value: unknown) => (typeof value === 'string' ? value.slice(0, 200) : undefined);

/** Notes on a refusal what the token claimed (read without trusting it), for the audit. */
function withClaims(err: unknown, token: string): unknown {
  if (!(err instanceof SignInFailure)) return err;
  try {
    const header = decodeProtectedHeader(token);
    err.claimed = { kid: claimedText(header.kid), alg: claimedText(header.alg) };
    const payload = decodeJwt(token);
    err.claimed = { ...err.claimed, iss: claimedText(payload.iss), sub: claimedText(payload.sub) };
  } catch {
    // Not even a readable JWT: it claimed nothing.
  }
  return err;
}

function personOf(payload: JWTPayload): Person {
  const person = personOfClaims(payload);
  if (!person) throw new SignInFailure('no_subject');
  return person;
}

/** A list of strings, or one string; anything else holds no group. */
function groupsOf(claim: unknown): string[] {
  if (typeof claim === 'string') return [claim];
  if (!Array.isArray(claim)) return [];
  return claim.filter((g): g is string => typeof g === 'string' && g.length <= 256).slice(0, maxGroups);
}
