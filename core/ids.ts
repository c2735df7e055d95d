import { createHash, randomBytes } from 'node:crypto';

/** Random identifiers: a prefix and 20 hex characters (80 bits), e.g. `evt_3f9a…`. */
export function randomId(prefix: string, bytes = 10): string {
  return `${prefix}_${randomBytes(bytes).toString('hex')}`;
}

/** Identifiers derived from their inputs, so that the same inputs always give the same id. */
export function derivedId(prefix: string, ...parts: Array<string | number>): string {
  const hash = createHash('sha256');
  for (const part of parts) hash.update(String(part)).update('\u0000');
  return `${prefix}_${hash.digest('hex').slice(0, 20)}`;
}

export const isIdOf = (prefix: string, value: string) => new RegExp(`^${prefix}_[0-9a-f]{8,64}$`).test(value);
