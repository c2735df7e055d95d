import dgram from 'node:dgram';

/** Free UDP ports on loopback: bound, read, released (the collector binds them right after). */
export async function freeUdpPorts(count: number): Promise<number[]> {
  const sockets = await Promise.all(
    Array.from({ length: count }, () => {
      const socket = dgram.createSocket('udp4');
      return new Promise<dgram.Socket>((resolve, reject) => {
        socket.once('error', reject);
        socket.bind(0, '127.0.0.1', () => resolve(socket));
      });
    }),
  );
  const ports = sockets.map((s) => s.address().port);
  await Promise.all(sockets.map((s) => new Promise<void>((resolve) => s.close(() => resolve()))));
  return ports;
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
