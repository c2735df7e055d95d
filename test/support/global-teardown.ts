import fs from 'node:fs';

export default async function globalTeardown(): Promise<void> {
  const engines = globalThis.__nettelEngines;
  if (!engines) return;
  await Promise.all(engines.processes.map((p) => p.stop()));
  fs.rmSync(engines.dir, { recursive: true, force: true });
}
