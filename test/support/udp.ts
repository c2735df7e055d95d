import dgram from 'node:dgram';
import { freePort } from '../../engines/local-process';

/** Free UDP ports on loopback, as freePort chooses them (below the kernel's ephemeral range; the collector binds them right after). */
export function freeUdpPorts(count: number): Promise<number[]> {
  return Promise.all(Array.from({ length: count }, () => freePort()));
}

/**
 * Sends datagrams to 127.0.0.1:port from a socket bound to `from` (any
 * 127.0.0.0/8 address: on Linux the whole block is loopback), so a test can
 * play several exporters with their own addresses.
 */
export async function sendDatagrams(from: string, port: number, datagrams: Buffer[]): Promise<void> {
  const socket = dgram.createSocket('udp4');
  await new Promise<void>((resolve, reject) => {
    socket.once('error', reject);
    socket.bind(0, from, () => resolve());
  });
  try {
    for (const datagram of datagrams) {
      await new Promise<void>((resolve, reject) => socket.send(datagram, port, '127.0.0.1', (err) => (err ? reject(err) : resolve())));
      // Loopback drops what the receiver's socket buffer cannot hold: a small pause keeps tests exact.
      await new Promise((resolve) => setImmediate(resolve));
    }
  } finally {
    socket.close();
  }
}
