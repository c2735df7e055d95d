import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * Signing as Standard Webhooks (and Svix) do it, so receivers can use their
 * libraries: the secret is `whsec_` and base64 of 32 random bytes; the
 * signed content is `<webhook-id>.<webhook-timestamp>.<body>`; the header
 * `webhook-signature` is `v1,` and the base64 HMAC-SHA256 of it under the
 * decoded secret. The timestamp (seconds) is signed, so a receiver that
 * refuses old timestamps (five minutes is usual) refuses replays.
 */
export const secretPrefix = 'whsec_';

export const newSecret = () => secretPrefix + randomBytes(32).toString('base64');

const keyOf = (secret: string) => Buffer.from(secret.startsWith(secretPrefix) ? secret.slice(secretPrefix.length) : secret, 'base64');

export function signature(secret: string, id: string, timestampSeconds: number, body: string): string {
  return 'v1,' + createHmac('sha256', keyOf(secret)).update(`${id}.${timestampSeconds}.${body}`).digest('base64');
}

export function signatureHeaders(secret: string, id: string, timestampSeconds: number, body: string): Record<string, string> {
  return {
    'webhook-id': id,
    'webhook-timestamp': String(timestampSeconds),
    'webhook-signature': signature(secret, id, timestampSeconds, body),
  };
}

/**
 * What a receiver does: recompute the signature, compare in constant time
 * with each signature of the header (several, space-separated, while a
 * secret rotates), and refuse a timestamp further than `toleranceSeconds`
 * from now.
 */
export function verifySignature(
  secret: string,
  headers: { id: string; timestamp: string; signature: string },
  body: string,
  nowSeconds: number,
  toleranceSeconds = 300,
): boolean {
  const ts = Number(headers.timestamp);
  if (!Number.isInteger(ts) || Math.abs(nowSeconds - ts) > toleranceSeconds) return false;
  const expected = Buffer.from(signature(secret, headers.id, ts, body));
  return headers.signature.split(' ').some((candidate) => {
    const given = Buffer.from(candidate);
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
}
