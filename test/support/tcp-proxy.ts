import net from 'node:net';
import { freePort } from '../../engines/local-process';

/**
 * A port in front of a real engine that a test takes down and brings back:
 * down, a connection is refused (and those open are cut); up, bytes pass
 * through to the engine unchanged. The outage is a real network one.
 */
export interface TcpProxy {
  readonly port: number;
  down(): Promise<void>;
  up(): Promise<void>;
}

export async function startTcpProxy(target: { host: string; port: number }): Promise<TcpProxy> {
  const port = await freePort();
  const sockets = new Set<net.Socket>();
  let server: net.Server | undefined;

  const up = () =>
    new Promise<void>((resolve, reject) => {
      const s = net.createServer((client) => {
        const upstream = net.connect(target.port, target.host);
        for (const socket of [client, upstream]) {
          sockets.add(socket);
          socket.on('close', () => sockets.delete(socket));
          socket.on('error', () => undefined);
        }
        client.pipe(upstream).pipe(client);
        client.on('close', () => upstream.destroy());
        upstream.on('close', () => client.destroy());
      });
      s.once('error', reject);
      s.listen(port, '127.0.0.1', () => resolve());
      server = s;
    });

  const down = () =>
    new Promise<void>((resolve) => {
      for (const socket of sockets) socket.destroy();
      if (!server) return resolve();
      server.close(() => resolve());
      server = undefined;
    });

  await up();
  return { port, up, down };
}
