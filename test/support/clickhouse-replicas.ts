import path from 'node:path';
import { freePort, type LocalProcess } from '../../engines/local-process';
import type { Logger } from '../../observability/logger';
import { loadConfig } from '../../service/config';
import { localClickHouseServer } from '../../engines/clickhouse-server';
import { waitFor } from './wait';
import { localZooKeeper } from './zookeeper';

/** The cluster's name in each replica's macros, which the DDL's `ON CLUSTER '{cluster}'` reads. */
export const clusterName = 'nettel';

/** One clickhouse-server of the cluster: its HTTP address and its process, to kill and start again. */
export interface ClickHouseReplica {
  /** Its `{replica}` macro. */
  name: string;
  url: string;
  process: LocalProcess;
  /** SIGKILL, and wait until it is gone. */
  kill(): Promise<void>;
  /** Starts it again on its data folder; resolves once it answers /ping. */
  start(): Promise<void>;
}

export interface ReplicatedClickHouse {
  zookeeper: LocalProcess;
  replicas: [ClickHouseReplica, ClickHouseReplica];
  stop(): Promise<void>;
}

/**
 * One shard of two clickhouse-server replicas (Debian's 18.16) coordinated by
 * one ZooKeeper, all on loopback and free ports, under `dir`: each replica's
 * config names the ZooKeeper, its macros (`{cluster}`, `{shard}`,
 * `{replica}`, which the cluster DDL's Replicated* engines and `ON CLUSTER`
 * read), the cluster (`remote_servers`: one shard, both replicas, the
 * replicas copying each other's inserts) and the queue of `ON CLUSTER`
 * statements (`distributed_ddl`). Replicas fetch parts from each other over
 * their interserver HTTP port.
 */
export async function startReplicatedClickHouse(dir: string, log: Logger): Promise<ReplicatedClickHouse> {
  const { binPath } = loadConfig(process.env);
  const zookeeperPort = await freePort();
  const zookeeper = localZooKeeper({ dir: path.join(dir, 'zookeeper'), port: zookeeperPort, binPath }, log);
  const ports = await Promise.all(['a', 'b'].map(async (name) => ({ name, http: await freePort(), tcp: await freePort(), interserver: await freePort() })));
  await zookeeper.start();
  const shard = ports.map((p) => `<replica><host>127.0.0.1</host><port>${p.tcp}</port></replica>`).join('');
  const replicas = ports.map((p) => {
    // A short ZooKeeper session: a killed replica's session (and its is_active node) expires within seconds, so the restarted one takes its place.
    const extraConfig = `
  <interserver_http_port>${p.interserver}</interserver_http_port>
  <interserver_http_host>127.0.0.1</interserver_http_host>
  <zookeeper><node><host>127.0.0.1</host><port>${zookeeperPort}</port></node><session_timeout_ms>4000</session_timeout_ms></zookeeper>
  <macros><cluster>${clusterName}</cluster><shard>01</shard><replica>${p.name}</replica></macros>
  <remote_servers><${clusterName}><shard><internal_replication>true</internal_replication>${shard}</shard></${clusterName}></remote_servers>
  <distributed_ddl><path>/clickhouse/task_queue/ddl</path></distributed_ddl>`;
    const server = localClickHouseServer({ dir: path.join(dir, `clickhouse-${p.name}`), port: p.http, tcpPort: p.tcp, binPath, extraConfig }, log);
    return replica(p.name, `http://127.0.0.1:${p.http}`, server);
  }) as [ClickHouseReplica, ClickHouseReplica];
  try {
    await Promise.all(replicas.map((r) => r.start()));
  } catch (err) {
    await Promise.all([...replicas.map((r) => r.process.stop()), zookeeper.stop()]);
    throw err;
  }
  return {
    zookeeper,
    replicas,
    stop: async () => {
      await Promise.all(replicas.map((r) => r.process.stop()));
      await zookeeper.stop();
    },
  };
}

function replica(name: string, url: string, server: LocalProcess): ClickHouseReplica {
  return {
    name,
    url,
    process: server,
    kill: async () => {
      const pid = server.pid;
      server.kill();
      await waitFor(() => Promise.resolve(server.running ? undefined : true), 15_000, `clickhouse-server ${name} (pid ${pid}) to die`);
    },
    start: () => server.start(),
  };
}

/** A statement a server refused: the statement's first line, and the server's own error (its code and first line). */
export interface RefusedStatement {
  statement: string;
  code: number | undefined;
  error: string;
}

/** The statements of a DDL script (each ends with `;` at a line's end; `--` lines are comments). */
export function statementsOf(script: string): string[] {
  return script
    .split(/;\n/)
    .map((s) => s.split('\n').filter((line) => !line.startsWith('--')).join('\n').trim())
    .filter((s) => s !== '');
}

/** Runs each statement on the server at `url` in turn, on past a refusal, as `clickhouse-client --multiquery --ignore-error` would; returns the refusals. */
export async function runStatements(url: string, statements: readonly string[]): Promise<RefusedStatement[]> {
  const refused: RefusedStatement[] = [];
  for (const statement of statements) {
    const res = await fetch(url, { method: 'POST', body: statement });
    const answer = await res.text();
    if (res.ok) continue;
    const error = answer.split('\n')[0]!;
    const code = /^Code: (\d+)/.exec(error)?.[1];
    refused.push({ statement: statement.split('\n')[0]!, code: code === undefined ? undefined : Number(code), error });
  }
  return refused;
}
