/**
 * A person: who stands behind a credential. Four eyes compares persons, not
 * keys: one person may hold several keys (and sign in besides), and each of
 * their credentials is the same person.
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

/** The longest subject, name and email a person carries; OpenID providers' subjects are at most 255 ASCII characters. */
export const personFieldMaxLength = 255;

export function isPerson(value: unknown): value is Person {
  if (typeof value !== 'object' || value === null) return false;
  const p = value as Record<string, unknown>;
  return (['subject', 'name', 'email'] as const).every((f) => typeof p[f] === 'string' && p[f].length <= personFieldMaxLength) && p.subject !== '';
}

/** Whether two persons are one: the subject names a person, names and emails only describe them. */
export function samePerson(a: Person | null, b: Person | null): boolean {
  return a !== null && b !== null && a.subject === b.subject;
}
