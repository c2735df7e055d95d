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
