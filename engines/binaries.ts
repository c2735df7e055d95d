import fs from 'node:fs';
import path from 'node:path';

/** Finds an executable in the given folders; returns undefined when none is there. */
export function findExecutable(name: string, folders: readonly string[]): string | undefined {
  for (const folder of folders) {
    const candidate = path.join(folder, name);
    try {
      fs.accessSync(candidate, fs.constants.X_OK);
      return candidate;
    } catch {
      // Not in this folder; try the next.
    }
  }
  return undefined;
}

export function requireExecutable(name: string, folders: readonly string[], hint: string): string {
  const found = findExecutable(name, folders);
  if (!found) throw new Error(`${name} not found in ${folders.join(':')}; ${hint}`);
  return found;
}

/** The GoFlow2 build the set-up makes (scripts/goflow2-fixes.mjs names it; a unit test holds the two equal). */
export const goflow2BinaryName = 'goflow2-v2.2.6-nettel3';

/** The nats-server build the set-up makes (scripts/setup.mjs names it; a unit test holds the two equal). */
export const natsServerBinaryName = 'nats-server-v2.15.2';
