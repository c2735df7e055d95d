import dgram from 'node:dgram';
import { existsSync } from 'node:fs';
import { readdir, readFile, readlink } from 'node:fs/promises';

/**
 * The UDP ports a process has bound, read from the kernel (Linux /proc).
 * GoFlow2 says nothing once its sockets are bound (its "starting collection"
 * comes before the bind), and a datagram sent before the bind is dropped by
 * the kernel; so "listening" is asked of the kernel, not of GoFlow2.
 * Resolves undefined where /proc cannot tell (another OS, another user's
 * process), and no ports for a process that has exited.
 */
export async function udpPortsBoundBy(pid: number): Promise<Set<number> | undefined> {
  const inodes = await socketInodes(pid);
  if (!inodes) return undefined;
  const ports = new Set<number>();
  for (const table of ['/proc/net/udp', '/proc/net/udp6']) {
    const text = await readFile(table, 'utf8').catch(() => '');
    for (const line of text.split('\n').slice(1)) {
      const socket = parseSocketLine(line);
      if (socket && inodes.has(socket.inode)) ports.add(socket.port);
    }
  }
  return ports;
}

async function socketInodes(pid: number): Promise<Set<string> | undefined> {
  let fds: string[];
  try {
    fds = await readdir(`/proc/${pid}/fd`);
  } catch (err) {
    // Where /proc works, a process it does not list has exited: it holds nothing.
    if ((err as NodeJS.ErrnoException).code === 'ENOENT' && existsSync('/proc/self/fd')) return new Set();
    return undefined;
  }
  const inodes = new Set<string>();
  await Promise.all(
    fds.map(async (fd) => {
      // An fd closed between the listing and the read is simply not a socket any more.
      const target = await readlink(`/proc/${pid}/fd/${fd}`).catch(() => '');
      const match = /^socket:\[(\d+)\]$/.exec(target);
      if (match) inodes.add(match[1]!);
    }),
  );
  return inodes;
}

/** One row of /proc/net/udp: `sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode …`. */
export function parseSocketLine(line: string): { port: number; inode: string } | undefined {
  const fields = line.trim().split(/\s+/);
  const local = fields[1];
  const inode = fields[9];
  if (!local || !inode) return undefined;
  const port = Number.parseInt(local.slice(local.lastIndexOf(':') + 1), 16);
  return Number.isInteger(port) ? { port, inode } : undefined;
}

/** Whether another socket holds a UDP port on this address: a bind is tried and let go at once. */
export function udpPortTaken(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = dgram.createSocket(host.includes(':') ? 'udp6' : 'udp4');
    socket.once('error', (err: NodeJS.ErrnoException) => {
      socket.close();
      resolve(err.code === 'EADDRINUSE');
    });
    socket.bind(port, host, () => socket.close(() => resolve(false)));
  });
}
