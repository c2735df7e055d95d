import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';

/**
 * Secrets kept so that they can be used again (webhook signing secrets), at
 * rest under AES-256-GCM with a key from the platform's setting. Without a
 * key they are stored as given (`plain:`), and a key set later still reads
 * them.
 */
const sealedPrefix = 'aes256gcm:';

const keyOf = (material: string) => createHash('sha256').update(material).digest();

export function seal(secret: string, keyMaterial: string | undefined): string {
  if (!keyMaterial) return `plain:${secret}`;
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', keyOf(keyMaterial), iv);
  const body = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final()]);
  return sealedPrefix + Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64');
}

export function open(sealed: string, keyMaterial: string | undefined): string {
  if (sealed.startsWith('plain:')) return sealed.slice('plain:'.length);
  if (!sealed.startsWith(sealedPrefix)) throw new Error('unknown secret format');
  if (!keyMaterial) throw new Error('a sealed secret needs WEBHOOK_SECRETS_KEY');
  const raw = Buffer.from(sealed.slice(sealedPrefix.length), 'base64');
  const decipher = createDecipheriv('aes-256-gcm', keyOf(keyMaterial), raw.subarray(0, 12));
  decipher.setAuthTag(raw.subarray(12, 28));
  return Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString('utf8');
}
