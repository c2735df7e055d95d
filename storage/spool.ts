import fs from 'node:fs';
import path from 'node:path';

/**
 * The chDB spool folder: large inserts are written there and read back by
 * the engine (see ChdbClickHouse). Files carry their process id in their name.
 */

/** Inserts of at least this many bytes go through the spool folder. */
export const spoolThresholdBytes = 4 * 1024 * 1024;
export const spoolFilePrefix = 'nettel-insert-';

/**
 * Writes a spool file in one write call where the system allows it (a loop
 * finishes a short write). fs.promises.writeFile writes 512 KiB at a time,
 * each piece a turn of the event loop: under ingest load, where each turn
 * waits behind HTTP bodies being parsed, a 32 MiB batch took 1.7 to 2.3 s
 * to reach the file, and the inserts stalled behind it (measured in the
 * batched end-to-end bench; BENCHMARKS.md).
 */
export async function writeSpoolFile(file: string, data: Uint8Array): Promise<void> {
  const handle = await fs.promises.open(file, 'wx', 0o600);
  try {
    for (let offset = 0; offset < data.byteLength; ) {
      const { bytesWritten } = await handle.write(data, offset, data.byteLength - offset);
      offset += bytesWritten;
    }
  } finally {
    await handle.close();
  }
}

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
