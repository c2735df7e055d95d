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
  const parsed: unknown = JSON.parse(json);
  return isPerson(parsed) ? parsed : null;
}

/** Whether two persons are one: the subject names a person, names and emails only describe them. */
export function samePerson(a: Person | null, b: Person | null): boolean {
  return a !== null && b !== null && a.subject === b.subject;
}
