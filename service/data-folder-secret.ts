import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

/**
 * A secret the embedded default generates once and keeps in the data folder
 * (mode 0600), so a restart finds the same one: the admin key, the webhook
 * sealing key, the engines' credentials. `generated` tells whether this call
 * made it (a caller shows a new secret once, never again).
 */
export function secretInDataFolder(dataDir: string, fileName: string, make: () => string): { value: string; generated: boolean; file: string } {
  const file = path.join(dataDir, fileName);
  if (fs.existsSync(file)) return { value: fs.readFileSync(file, 'utf8').trim(), generated: false, file };
  const value = make();
  fs.mkdirSync(dataDir, { recursive: true });
  // `wx`: two processes starting on one data folder keep the first one's secret, never a mix.
  try {
    fs.writeFileSync(file, value + '\n', { mode: 0o600, flag: 'wx' });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    return { value: fs.readFileSync(file, 'utf8').trim(), generated: false, file };
  }
  return { value, generated: true, file };
}

/** A secret every process of a deployment must share (a signing or sealing key). */
export interface SharedSecret {
  /** The setting that gives it, named when it is missing. */
  setting: string;
  /** Its value as configured, if any. */
  given?: string;
  /** The roles that use it: a process with none of them needs none. */
  usedBy: readonly string[];
  /** Its file in the data folder, where the embedded default keeps a generated one. */
  file: string;
}

/**
 * A shared secret, resolved at start. On the embedded default (chDB: every
 * role in this one process, one data folder) an unset one is generated once
 * and kept in the data folder. With a ClickHouse server the roles may run as
 * processes with data folders of their own: the operator sets one value for
 * all, and a process that uses it refuses to start without it.
 */
export function sharedSecretOf(
  config: { roles: readonly string[]; dataDir: string; clickhouse: { url?: string } },
  secret: SharedSecret,
): string | undefined {
  if (secret.given) return secret.given;
  if (!config.roles.some((role) => secret.usedBy.includes(role))) return undefined;
  if (config.clickhouse.url) {
    throw new Error(
      `invalid configuration: ${secret.setting}: required with a ClickHouse server (CLICKHOUSE_URL), where the roles ` +
        `${secret.usedBy.join(' and ')} may run as separate processes: set the same random value (at least 32 characters) in every one`,
    );
  }
  return secretInDataFolder(config.dataDir, secret.file, () => randomBytes(32).toString('base64url')).value;
}
