import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { connect } from 'nats';
import { natsServerBinaryName, requireExecutable } from '../../engines/binaries';
import { freePort, isAlive, LocalProcess } from '../../engines/local-process';
import type { Logger } from '../../observability/logger';
import { loadConfig } from '../../service/config';
import { waitFor } from './wait';

/** The users of deploy/nats/nettel.conf: the topology job's admin and one per role. */
export const natsUsers = ['admin', 'api', 'stream-workers', 'temporal-worker', 'collector'] as const;
export type NatsUser = (typeof natsUsers)[number];

/** The variable a node reads a user's password from (deploy/nats/nettel.conf names them). */
export const natsPasswordVariable = (user: NatsUser) => `NETTEL_NATS_${user.toUpperCase().replace(/-/g, '_')}_PASSWORD`;

export interface NatsNode {
  /** The server name (`nats-1` …), as the cluster reports a stream's leader and replicas. */
  name: string;
  port: number;
  /** Its monitoring address (`-m`), where its client connections are listed. */
  monitoringUrl: string;
  process: LocalProcess;
}

export interface NatsCluster {
  /** Every node's client address, comma-separated, as a deployment's NATS_URL names them. */
  url: string;
  nodes: NatsNode[];
  /** Each user's password (hex: nats-server reads a variable's value as a config token, and base64 can parse as a date). */
  passwords: Record<NatsUser, string>;
  /** NATS_USER and NATS_PASSWORD of a role (or of the admin user). */
  credentials(user: NatsUser): { NATS_USER: string; NATS_PASSWORD: string };
  node(name: string): NatsNode;
  /** SIGKILL to one node; resolves once it is gone. */
  kill(name: string): Promise<void>;
  /** Starts a node again on its store. */
  restart(name: string): Promise<void>;
  stop(): Promise<void>;
}

const deployConf = path.resolve(__dirname, '../../deploy/nats/nettel.conf');

/**
 * A JetStream cluster of `size` nats-servers (the set-up's 2.15.2) run as
 * deploy/compose.yaml runs its nodes: deploy/nats/nettel.conf unchanged (sync
 * always, a user per role with only its subjects, passwords from the
 * environment), and the cluster given on the command line with the same
 * flags (cluster name, authenticated routes to every node, the node's name).
 * Only the addresses differ: loopback and free ports instead of a container's
 * 4222 and 6222, so nothing collides with other engines on the machine.
 */
export async function startNatsCluster(dir: string, size: number, log: Logger): Promise<NatsCluster> {
  const config = loadConfig(process.env);
  const command = config.nats.server ?? requireExecutable(natsServerBinaryName, [config.toolsDir, ...config.binPath], 'run the set-up');
  const passwords = Object.fromEntries(natsUsers.map((u) => [u, randomBytes(16).toString('hex')])) as Record<NatsUser, string>;
  const routePassword = randomBytes(16).toString('hex');
  const env = { ...process.env, ...Object.fromEntries(natsUsers.map((u) => [natsPasswordVariable(u), passwords[u]])) };
  const ports = await Promise.all(Array.from({ length: size * 3 }, () => freePort()));
  const route = (i: number) => `nats://route:${routePassword}@127.0.0.1:${ports[size + i]}`;
  const routes = Array.from({ length: size }, (_, i) => route(i)).join(',');
  const nodes: NatsNode[] = Array.from({ length: size }, (_, i) => {
    const name = `nats-${i + 1}`;
    const nodeDir = path.join(dir, name);
    // As compose's command for the node, plus the loopback address, its ports and the monitoring port (connections by client).
    const args = ['-c', deployConf, '-js', '-sd', path.join(nodeDir, 'store'), '--cluster_name', 'nettel', '--cluster', route(i), '--routes', routes, '--name', name];
    const local = ['-a', '127.0.0.1', '-p', String(ports[i]), '-m', String(ports[2 * size + i])];
    return { name, port: ports[i]!, monitoringUrl: `http://127.0.0.1:${ports[2 * size + i]}`, process: new LocalProcess({ name: 'nats-server', command, args: [...args, ...local], dir: nodeDir, port: ports[i]!, env }, log) };
  });
  await Promise.all(nodes.map((n) => n.process.start()));
  const node = (name: string) => nodes.find((n) => n.name === name) ?? fail(`no node ${name}`);
  const cluster: NatsCluster = {
    url: nodes.map((n) => `nats://127.0.0.1:${n.port}`).join(','),
    nodes,
    passwords,
    credentials: (user) => ({ NATS_USER: user, NATS_PASSWORD: passwords[user] }),
    node,
    kill: async (name) => {
      const pid = node(name).process.pid;
      if (pid) process.kill(pid, 'SIGKILL');
      await waitFor(() => Promise.resolve(!pid || !isAlive(pid) ? true : undefined), 10_000, `${name} to die`);
    },
    restart: (name) => node(name).process.start(),
    stop: async () => {
      await Promise.all(nodes.map((n) => n.process.stop()));
    },
  };
  // A cluster that never elects its meta leader is stopped here: the caller has nothing to stop.
  await jetStreamReady(cluster).catch(async (err: unknown) => {
    await cluster.stop();
    throw err;
  });
  return cluster;
}

/** JetStream answers once the cluster has elected its meta leader. */
async function jetStreamReady(cluster: NatsCluster): Promise<void> {
  const nc = await connect({ servers: cluster.url.split(','), user: 'admin', pass: cluster.passwords.admin });
  try {
    const jsm = await nc.jetstreamManager({ checkAPI: false });
    await waitFor(() => jsm.getAccountInfo(), 30_000, 'the cluster to elect its JetStream meta leader');
  } finally {
    await nc.close();
  }
}

function fail(message: string): never {
  throw new Error(message);
}
