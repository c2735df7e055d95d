/**
 * A person: who stands behind a credential. Four eyes compares persons, not
 * keys: one person may hold several keys (and sign in besides), and each of
 * their credentials is the same person.
 *
 * One identity per human (docs/governance.md, "Who is a person"): a person
 * who signs in is the `sub` the service's one OpenID provider (OIDC_ISSUER_URL)
 * vouches for, whether through a console session or a bearer token; a key
 * owned by a person records that same subject, copied from the minting
 * person's own credential, never typed in by a workspace. Only the platform
 * admin names a person by hand (a workspace without single sign-on, or its
 * first admin), and a workspace that binds person keys to sign-ins refuses
 * even that.
 */
export interface Person {
  /** The OpenID provider's `sub` for people who sign in; `key:<key_id>` for a key minted before keys had owners. */
  subject: string;
  /** '' when unknown. */
  name: string;
  /** '' when unknown. */
  email: string;
}

/** Who owns a key: a person, or `service` for machine keys (exporters, integrations, automation), which stand for nobody. */
export type KeyOwner = Person | 'service';

/**
 * The bounds of a person's fields, the one place they are written: OpenID
 * providers' subjects are at most 255 ASCII characters (OpenID Connect Core
 * §2); an e-mail address may be 320 (RFC 3696 erratum 1690). Whatever signs
 * in with a person also fits everywhere the person is stored or audited.
 */
export const personBounds = { subject: 255, name: 255, email: 320 } as const;

const fields = ['subject', 'name', 'email'] as const;

/**
 * Whether a value is a person: the three fields, text within their bounds, a
 * subject. Written without zod (core/person-schema.ts is the same rule as a
 * zod schema, for request and session parsing) so that the workflow bundle,
 * which reads persons from signals, stays free of it.
 */
export function isPerson(value: unknown): value is Person {
  if (typeof value !== 'object' || value === null) return false;
  const p = value as Record<string, unknown>;
  return fields.every((f) => typeof p[f] === 'string' && p[f].length <= personBounds[f]) && p.subject !== '';
}

/** The person a value is, with only the person's three fields; null when it is none. */
export function personOrNull(value: unknown): Person | null {
  return isPerson(value) ? { subject: value.subject, name: value.name, email: value.email } : null;
}

const claimText = (value: unknown, max: number) => (typeof value === 'string' ? value.slice(0, max) : '');

/**
 * The person an OpenID provider's verified claims name (an ID token at
 * sign-in, an access token as a bearer token): the same fields, cut to the
 * same bounds, both ways. Null when the subject is missing or longer than a
 * subject may be: such a token names nobody.
 */
export function personOfClaims(claims: { sub?: unknown; name?: unknown; preferred_username?: unknown; email?: unknown }): Person | null {
  const subject = claims.sub;
  if (typeof subject !== 'string' || subject === '' || subject.length > personBounds.subject) return null;
  return {
    subject,
    name: claimText(claims.name, personBounds.name) || claimText(claims.preferred_username, personBounds.name),
    email: claimText(claims.email, personBounds.email),
  };
}

/**
 * The person a requester stored before persons were recorded stands for: a
 * key was a person of its own (`key:<key_id>`); anything else names nobody.
 */
export function personBeforeOwners(actor: string): Person | null {
  return actor.startsWith('key_') ? { subject: `key:${actor}`, name: '', email: '' } : null;
}

/** A stored person (JSON), or what a requester stored before persons stands for. */
export function storedPerson(json: unknown, actor: string): Person | null {
  if (typeof json !== 'string' || json === '') return personBeforeOwners(actor);
  return personOrNull(JSON.parse(json));
}

/**
 * Whether two persons are one: the subject names a person (see Person for
 * why one human has one subject however they authenticate); names and
 * e-mails only describe them.
 */
export function samePerson(a: Person | null, b: Person | null): boolean {
  return a !== null && b !== null && a.subject === b.subject;
}
