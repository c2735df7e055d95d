import fs from 'node:fs';
import type { NatsNode } from '../nats-cluster';

/**
 * What the NATS nodes sent one process, read from outside it: the local
 * ports of its TCP sockets (from /proc), matched with the client connections
 * each node's monitoring endpoint lists (`/connz`, by the client's port).
 * Every role connects as `nettel`, so the port is what tells two stream
 * worker processes apart.
 */
export async function bytesDeliveredTo(pid: number, nodes: NatsNode[]): Promise<number> {
  const ports = localPortsOf(pid);
  let total = 0;
  for (const node of nodes) {
    const res = await fetch(`${node.monitoringUrl}/connz?limit=4096`).catch(() => undefined);
    // A node that is down lists nothing; the process's connection is then on another.
    if (!res?.ok) continue;
    const { connections } = (await res.json()) as { connections: Array<{ ip: string; port: number; out_bytes: number }> };
    for (const c of connections) if (c.ip === '127.0.0.1' && ports.has(c.port)) total += c.out_bytes;
  }
  return total;
}

/** The local ports of a process's TCP sockets: its file descriptors' socket inodes, looked up in /proc/net/tcp{,6}. */
function localPortsOf(pid: number): Set<number> {
  const inodes = new Set<string>();
  for (const fd of fs.readdirSync(`/proc/${pid}/fd`)) {
    const target = safeReadlink(`/proc/${pid}/fd/${fd}`);
    const inode = /^socket:\[(\d+)\]$/.exec(target ?? '')?.[1];
    if (inode) inodes.add(inode);
  }
  const ports = new Set<number>();
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    for (const line of fs.readFileSync(table, 'utf8').split('\n').slice(1)) {
      const fields = line.trim().split(/\s+/);
      // sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode …
      if (fields.length > 9 && inodes.has(fields[9]!)) ports.add(parseInt(fields[1]!.split(':')[1]!, 16));
    }
  }
  return ports;
}

function safeReadlink(file: string): string | undefined {
  try {
    return fs.readlinkSync(file);
  } catch {
    // The descriptor closed between the listing and the read.
    return undefined;
  }
}
