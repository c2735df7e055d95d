import fs from 'node:fs';
import path from 'node:path';

/**
 * The chDB spool folder: large inserts are written there and read back by
 * the engine (see ChdbClickHouse). Files carry their process id in their name.
 */

/** Inserts of at least this many bytes go through the spool folder. */
export const spoolThresholdBytes = 4 * 1024 * 1024;
export const spoolFilePrefix = 'nettel-insert-';

/** Removes spool files a process that died left behind (their names carry the pid). */
export async function removeStaleSpoolFiles(spoolDir: string): Promise<void> {
  const names = await fs.promises.readdir(spoolDir).catch(() => [] as string[]);
  for (const name of names) {
    const pid = Number(/^nettel-insert-(\d+)-/.exec(name)?.[1]);
    if (!pid || pid === process.pid || isRunning(pid)) continue;
    await fs.promises.rm(path.join(spoolDir, name), { force: true });
  }
}

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: it runs, as another user.
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
