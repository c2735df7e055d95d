import { createCipheriv, createDecipheriv, createHash, hkdfSync, randomBytes } from 'node:crypto';

/**
 * Secrets kept so that they can be used again (webhook signing secrets), at
 * rest under AES-256-GCM. Each sealing derives its own key from the
 * platform's key material with HKDF-SHA256 and a fresh salt, and binds the
 * secret to what owns it (workspace and webhook id) as associated data: a
 * sealed value copied onto another webhook, or another workspace, does not
 * open. The sealed value names the key material it was sealed with (a short
 * fingerprint), so a rotation keeps reading values sealed under the previous
 * key until they are sealed again.
 *
 * Read only, for values written by earlier versions: `plain:` (stored as
 * given) and `aes256gcm:` (one key, no associated data).
 */
const sealedPrefix = 'v2:';
const legacyPrefix = 'aes256gcm:';
const info = Buffer.from('nettel secret-box v2');

/** Whom a secret belongs to: it opens only for that owner. */
export interface SecretOwner {
  orgId: string;
  id: string;
}

/** The key material to seal with, and earlier ones that still open what they sealed. */
export interface SealingKeys {
  current: string;
  previous?: readonly string[];
}

export class SecretBoxError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SecretBoxError';
  }
}

const fingerprintOf = (material: string) => createHash('sha256').update(`nettel key id\n${material}`).digest('hex').slice(0, 8);
const derivedKey = (material: string, salt: Buffer) => Buffer.from(hkdfSync('sha256', material, salt, info, 32));
const associatedData = (owner: SecretOwner) => Buffer.from(`${owner.orgId}\n${owner.id}`);

export function seal(secret: string, keys: SealingKeys, owner: SecretOwner): string {
  const salt = randomBytes(16);
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', derivedKey(keys.current, salt), iv);
  cipher.setAAD(associatedData(owner));
  const body = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final()]);
  return `${sealedPrefix}${fingerprintOf(keys.current)}:${Buffer.concat([salt, iv, cipher.getAuthTag(), body]).toString('base64')}`;
}

export function open(sealed: string, keys: SealingKeys | undefined, owner: SecretOwner): string {
  if (sealed.startsWith('plain:')) return sealed.slice('plain:'.length);
  if (!keys) throw new SecretBoxError('a sealed secret needs WEBHOOK_SECRETS_KEY');
  const materials = [keys.current, ...(keys.previous ?? [])];
  if (sealed.startsWith(legacyPrefix)) return openLegacy(sealed.slice(legacyPrefix.length), materials);
  const [, fingerprint, payload] = /^v2:([0-9a-f]{8}):(.+)$/.exec(sealed) ?? [];
  if (!fingerprint || !payload) throw new SecretBoxError('unknown secret format');
  const material = materials.find((m) => fingerprintOf(m) === fingerprint);
  if (!material) throw new SecretBoxError(`the secret was sealed with a key (id ${fingerprint}) that is neither WEBHOOK_SECRETS_KEY nor one of WEBHOOK_SECRETS_PREVIOUS_KEYS`);
  const raw = Buffer.from(payload, 'base64');
  try {
    const decipher = createDecipheriv('aes-256-gcm', derivedKey(material, raw.subarray(0, 16)), raw.subarray(16, 28));
    decipher.setAAD(associatedData(owner));
    decipher.setAuthTag(raw.subarray(28, 44));
    return Buffer.concat([decipher.update(raw.subarray(44)), decipher.final()]).toString('utf8');
  } catch {
    throw new SecretBoxError('the sealed secret does not open for its owner (altered, or copied from another webhook)');
  }
}

/** Values an earlier version sealed: one SHA-256 of the key material, no associated data. */
function openLegacy(payload: string, materials: string[]): string {
  const raw = Buffer.from(payload, 'base64');
  for (const material of materials) {
    try {
      const decipher = createDecipheriv('aes-256-gcm', createHash('sha256').update(material).digest(), raw.subarray(0, 12));
      decipher.setAuthTag(raw.subarray(12, 28));
      return Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString('utf8');
    } catch {
      // The next key material, if any.
    }
  }
  throw new SecretBoxError('the sealed secret opens with none of the configured keys');
}
