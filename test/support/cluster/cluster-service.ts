import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { connect, type NatsConnection } from 'nats';
import { parse } from 'yaml';
import { freePort } from '../../../engines/local-process';
import type { Logger } from '../../../observability/logger';
import { startNatsCluster, type NatsCluster } from '../nats-cluster';
import { freeUdpPorts } from '../udp';
import { RoleProcess } from './role-process';

const deploy = path.resolve(__dirname, '../../../deploy');
const topologyJob = path.resolve(__dirname, '../../../dist/service/nats-topology.js');

/** The roles a cluster test runs, each with as many processes as deploy/compose.yaml gives it. */
export const clusterRoles = ['api', 'stream-workers', 'temporal-worker', 'collector'] as const;
export type ClusterRole = (typeof clusterRoles)[number];

interface ComposeService {
  environment: Record<string, string>;
  deploy?: { replicas?: number };
}

/** How deploy/compose.yaml runs a role: its ROLES, NATS user and replicas of streams, and how many processes. */
export function composeRole(role: ClusterRole): { env: Record<string, string>; processes: number } {
  const compose = parse(fs.readFileSync(path.join(deploy, 'compose.yaml'), 'utf8'), { merge: true }) as { services: Record<string, ComposeService> };
  const service = compose.services[role]!;
  const { ROLES, NATS_USER, NATS_REPLICAS } = service.environment;
  return { env: { ROLES: ROLES!, NATS_USER: NATS_USER!, NATS_REPLICAS: NATS_REPLICAS! }, processes: service.deploy?.replicas ?? 1 };
}

export interface ClusterService {
  nats: NatsCluster;
  /** A connection as the admin user, for the test's reads of the topology. */
  admin: NatsConnection;
  database: string;
  /** The platform admin key every API process takes. */
  adminKey: string;
  processes: Record<ClusterRole, RoleProcess[]>;
  /** The UDP port the collector takes NetFlow on (127.0.0.1). */
  netflowPort: number;
  stop(): Promise<void>;
}

/**
 * The service as deploy/compose.yaml runs it, on loopback: a three-node
 * JetStream cluster from deploy/nats/nettel.conf, the topology job as the
 * admin user, then each role as its own processes and NATS user, on the
 * run's clickhouse-server (a database of its own) and Temporal (a task
 * queue of its own). The NATS prefix is `nettel`, the one the config's
 * permissions name. `roleEnv` adds settings of one role (the BGP speaker
 * the temporal-worker announces through); `counts` runs more processes of a
 * role than compose gives it (two temporal-workers).
 */
export async function startClusterService(
  dir: string,
  log: Logger,
  roleEnv: Partial<Record<ClusterRole, Record<string, string>>> = {},
  counts: Partial<Record<ClusterRole, number>> = {},
): Promise<ClusterService> {
  const nats = await startNatsCluster(path.join(dir, 'nats'), 3, log);
  const started: RoleProcess[] = [];
  try {
    return await startRoles(dir, nats, { roleEnv, counts }, started);
  } catch (err) {
    // A start that fails leaves nothing running: the caller, given no service, cannot stop it.
    await Promise.all(started.map((p) => p.stop()));
    await nats.stop();
    throw err;
  }
}

interface RoleOptions {
  roleEnv: Partial<Record<ClusterRole, Record<string, string>>>;
  counts: Partial<Record<ClusterRole, number>>;
}

/** The topology job, then each role's processes (each pushed on `started` as it starts). */
async function startRoles(dir: string, nats: NatsCluster, { roleEnv, counts }: RoleOptions, started: RoleProcess[]): Promise<ClusterService> {
  const id = randomBytes(5).toString('hex');
  const database = `cluster_${id}`;
  const shared = {
    NATS_URL: nats.url,
    NATS_PREFIX: 'nettel',
    // The streams reserve their bounds on every node; three nodes share this machine's disk.
    NATS_STREAM_MAX_BYTES: String(256 * 1024 ** 2),
    NATS_DEAD_LETTER_MAX_BYTES: String(64 * 1024 ** 2),
    // The product's ack wait (30 s): a shorter one lets a worker's buffered messages reach a second worker while
    // the first still holds them, which the write path does not yet survive (docs/operations/cluster.md, known defects).
    WORKER_MAX_WAIT_MS: '50',
    CLICKHOUSE_URL: process.env.TEST_CLICKHOUSE_URL!,
    CLICKHOUSE_DATABASE: database,
    TEMPORAL_ADDRESS: process.env.TEST_TEMPORAL_ADDRESS!,
    TEMPORAL_TASK_QUEUE: `cluster-${id}`,
    ADMIN_API_KEY: `nta_cluster_${randomBytes(16).toString('hex')}`,
    DECISION_SIGNING_KEY: randomBytes(32).toString('base64url'),
    BGP_SPEAKER_ADDRESS: 'off',
    AUTH_FAILURES_PER_MINUTE: '0',
    LOG_LEVEL: 'warn',
  };
  await promisify(execFile)(process.execPath, [topologyJob], { env: { ...process.env, ...shared, NATS_REPLICAS: '3', ...nats.credentials('admin') } });
  const processes = {} as Record<ClusterRole, RoleProcess[]>;
  // The collector's listeners on loopback (compose publishes 2055 and 6343); GoFlow2's metrics port is picked free.
  const [netflowPort, sflowPort] = await freeUdpPorts(2);
  const collector = { COLLECTOR_HOST: '127.0.0.1', COLLECTOR_NETFLOW_PORT: String(netflowPort), COLLECTOR_SFLOW_PORT: String(sflowPort), COLLECTOR_REGISTRY_REFRESH_MS: '300' };
  for (const role of clusterRoles) {
    const { env, processes: composed } = composeRole(role);
    processes[role] = await Promise.all(
      Array.from({ length: counts[role] ?? composed }, async (_, i) => {
        const port: Record<string, string> = role === 'api' ? { PORT: String(await freePort()), HOST: '127.0.0.1' } : role === 'collector' ? collector : {};
        const password = nats.passwords[env.NATS_USER as keyof NatsCluster['passwords']];
        return new RoleProcess(`${role}-${i + 1}`, dir, { ...shared, ...env, ...port, NATS_PASSWORD: password, ...roleEnv[role] }, { database, prefix: 'nettel' });
      }),
    );
  }
  const all = clusterRoles.flatMap((r) => processes[r]);
  // The workers first: the API's first accepted flow has a consumer waiting for it.
  const start = async (p: RoleProcess) => {
    started.push(p);
    await p.start();
  };
  for (const p of all.filter((p) => !p.url)) await start(p);
  await Promise.all(all.filter((p) => p.url).map(start));
  const admin = await connect({ servers: nats.url.split(','), user: 'admin', pass: nats.passwords.admin });
  return {
    nats,
    admin,
    database,
    adminKey: shared.ADMIN_API_KEY,
    processes,
    netflowPort: netflowPort!,
    stop: async () => {
      await Promise.all(all.map((p) => p.stop()));
      await admin.close();
      await nats.stop();
    },
  };
}
