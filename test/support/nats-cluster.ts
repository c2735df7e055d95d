import fs from 'node:fs';
import path from 'node:path';
import { natsServerBinaryName, requireExecutable } from '../../engines/binaries';
import { freePort, LocalProcess } from '../../engines/local-process';
import type { Logger } from '../../observability/logger';
import { loadConfig } from '../../service/config';

/** A JetStream cluster of `size` nats-servers (the set-up's build) on loopback, each syncing always, with its store under `dir`. */
export async function startNatsCluster(dir: string, size: number, log: Logger): Promise<{ url: string; stop(): Promise<void> }> {
  const config = loadConfig(process.env);
  const command = config.nats.server ?? requireExecutable(natsServerBinaryName, [config.toolsDir, ...config.binPath], 'run the set-up');
  const ports = await Promise.all(Array.from({ length: size * 2 }, () => freePort()));
  const clientPorts = ports.slice(0, size);
  const routePorts = ports.slice(size);
  const routes = routePorts.map((p) => `"nats://127.0.0.1:${p}"`).join(', ');
  const servers = clientPorts.map((port, i) => {
    const serverDir = path.join(dir, `n${i + 1}`);
    fs.mkdirSync(serverDir, { recursive: true });
    const file = path.join(serverDir, 'nats.conf');
    fs.writeFileSync(
      file,
      `listen: "127.0.0.1:${port}"\nserver_name: n${i + 1}\n` +
        `jetstream {\n  store_dir: "${path.join(serverDir, 'store')}"\n  sync_interval: always\n}\n` +
        `cluster {\n  name: test\n  listen: "127.0.0.1:${routePorts[i]}"\n  routes: [${routes}]\n}\n`,
    );
    return new LocalProcess({ name: 'nats-server', command, args: ['-c', file], dir: serverDir, port }, log);
  });
  await Promise.all(servers.map((s) => s.start()));
  return {
    url: clientPorts.map((p) => `nats://127.0.0.1:${p}`).join(','),
    stop: async () => {
      await Promise.all(servers.map((s) => s.stop()));
    },
  };
}
