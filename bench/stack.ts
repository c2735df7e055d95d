import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { localNatsServer, localTemporalServer } from '../engines/engines';
import { freePort, type LocalProcess } from '../engines/local-process';
import { loadConfig, type Config } from '../service/config';
import { createLogger, type Logger } from '../observability/logger';
import { benchRouter, type BenchRouter } from './router';

/**
 * The stack under measurement, started as `npm start` starts it: the
 * compiled service (dist/service/main.js) on engines the environment names,
 * or on local engines in a fresh folder. With chDB every role shares one
 * process; with CLICKHOUSE_URL the API and the workers run as two processes
 * (the collector with the workers). The collector listens on free UDP ports.
 */
export interface ServiceRun {
  url: string;
  processes: Array<{ role: string; child: ChildProcess }>;
  /** The service's DATA_DIR; with chDB its tables live in `chdb/` under it. */
  dataDir: string;
  database: string;
  /** Its NATS_PREFIX, which names its streams and consumers. */
  natsPrefix: string;
  stop(): Promise<void>;
}

export interface LaunchOptions {
  dataDir: string;
  database: string;
  natsUrl?: string;
  /** The service's NATS_PREFIX: a restart on the same folder keeps it (a fresh one each launch otherwise). */
  natsPrefix?: string;
  withoutCollector?: boolean;
  /** One process per entry, each its ROLES (the cluster scenario: `['api', 'stream-workers', 'stream-workers']`); the stack's own split otherwise. */
  roles?: string[];
  /** Settings of this service alone (its CLICKHOUSE_URL). */
  env?: Record<string, string>;
}

export interface BenchStack extends ServiceRun {
  adminKey: string;
  natsUrl: string;
  engines: LocalProcess[];
  dir: string;
  /** The collector's UDP ports on 127.0.0.1 (NetFlow v9/IPFIX, sFlow). */
  collectorPorts: { netflow: number; sflow: number };
  /** The gobgpd and BIRD the stack's service announces mitigations through and to, when asked for (else the service runs no speaker). */
  router?: BenchRouter;
  /**
   * Another service on the same engines, on its own data folder and database (e.g. one seeded beforehand);
   * `natsUrl` puts it on another NATS, and `withoutCollector` leaves out the collector, whose ports the stack's service holds.
   */
  launch(opts: LaunchOptions): Promise<ServiceRun>;
  /** Stops the service alone (the engines keep running), so its chDB folder can be opened by the bench. */
  stopService(): Promise<void>;
  /** Stops the service if it still runs, then the engines, and removes the folder. */
  stop(): Promise<void>;
}

const mainJs = path.resolve(__dirname, '../service/main.js');

/** The chDB folder of a service whose DATA_DIR is `dataDir`, as service/roles/adapters.ts places it. */
export const chdbFolderOf = (dataDir: string) => path.join(dataDir, 'chdb');

/**
 * A nats-server as the embedded default runs it; `interval` leaves syncing to the server's default, for the cost of syncing.
 * Each service's streams reserve NATS_STREAM_MAX_BYTES and 3 GiB of the store's bound, which the embedded bound
 * holds once; the bench's server holds the streams of three (the stack's, scenario 11's, the top-talkers').
 */
export function benchNatsServer(config: Config, dir: string, port: number, sync: 'always' | 'interval', log: Logger): LocalProcess {
  const maxFileStoreBytes = 4 * config.nats.embeddedMaxFileStoreBytes;
  return localNatsServer({ dir, port, binPath: config.binPath, toolsDir: config.toolsDir, server: config.nats.server, maxFileStoreBytes, sync }, log);
}

/** Local engines in `dir` for what the environment does not name, and the BGP peers when asked for. */
async function benchEngines(config: Config, dir: string, log: Logger, withRouter: boolean) {
  const router = withRouter ? await benchRouter(config, path.join(dir, 'router'), log) : undefined;
  const engines: LocalProcess[] = [...(router?.engines ?? [])];
  let natsUrl = config.nats.url;
  if (!natsUrl) {
    const port = await freePort();
    engines.push(benchNatsServer(config, path.join(dir, 'nats'), port, 'always', log));
    natsUrl = `nats://127.0.0.1:${port}`;
  }
  let temporalAddress = config.temporal.address;
  if (!temporalAddress) {
    const port = await freePort();
    engines.push(localTemporalServer({ dir: path.join(dir, 'temporal'), port, binPath: config.binPath, cli: config.temporal.cli, toolsDir: config.toolsDir }, log));
    temporalAddress = `127.0.0.1:${port}`;
  }
  await Promise.all(engines.map((e) => e.start()));
  return { engines, natsUrl, temporalAddress, router };
}

/** Starts the compiled service with these roles; resolves once an api process printed that it is up. */
async function startService(role: string, env: NodeJS.ProcessEnv, port: number, cpuProfileDir?: string): Promise<ChildProcess> {
  const args = cpuProfileDir ? ['--cpu-prof', `--cpu-prof-dir=${cpuProfileDir}`, mainJs] : [mainJs];
  const child = spawn(process.execPath, args, {
    env: { ...env, ROLES: role, PORT: role.includes('api') ? String(port) : '0' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  await new Promise<void>((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (c: Buffer) => {
      out += c.toString();
      if (out.includes('nettel is up') || !role.includes('api')) resolve();
    });
    child.once('exit', (code) => reject(new Error(`service (${role}) exited with ${code}`)));
    if (!role.includes('api')) setTimeout(resolve, 3000);
  });
  return child;
}

/** One service (one or two processes, by roles) on `dataDir` and `database`, answering on a free port. */
async function launchService(
  baseEnv: NodeJS.ProcessEnv,
  roles: string[],
  opts: { dataDir: string; database: string; natsUrl?: string; natsPrefix?: string; cpuProfileDir?: string },
): Promise<ServiceRun> {
  const port = await freePort();
  const natsPrefix = opts.natsPrefix ?? `bench${randomBytes(4).toString('hex')}`;
  const env: NodeJS.ProcessEnv = {
    ...baseEnv,
    DATA_DIR: opts.dataDir,
    CLICKHOUSE_DATABASE: opts.database,
    NATS_PREFIX: natsPrefix,
    // The roles of one service seal and open webhook secrets with one key (required with a ClickHouse server).
    WEBHOOK_SECRETS_KEY: baseEnv.WEBHOOK_SECRETS_KEY ?? randomBytes(32).toString('base64url'),
  };
  if (opts.natsUrl) env.NATS_URL = opts.natsUrl;
  const processes: ServiceRun['processes'] = [];
  let running = true;
  const stop = async () => {
    if (!running) return;
    running = false;
    for (const { child } of [...processes].reverse()) {
      // A process the scenario killed (-9) has exited already: waiting for its exit would wait forever.
      if (child.exitCode !== null || child.signalCode !== null) continue;
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGINT');
      await exited;
    }
  };
  try {
    for (const role of roles) processes.push({ role, child: await startService(role, env, port, opts.cpuProfileDir) });
    const url = `http://127.0.0.1:${port}`;
    await waitHealthy(url);
    return { url, processes, dataDir: opts.dataDir, database: opts.database, natsPrefix, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}

/** `router`: a gobgpd and a BIRD 2 for the automation scenario, the stack's service announcing through the one to the other. */
export async function startBenchStack(opts: { cpuProfileDir?: string; router?: boolean }): Promise<BenchStack> {
  const config = loadConfig(process.env);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'nettel-bench-'));
  const { engines, natsUrl, temporalAddress, router } = await benchEngines(config, dir, createLogger('warn', 'bench'), opts.router ?? false);
  const adminKey = `nta_bench_${randomBytes(16).toString('hex')}`;
  const collectorPorts = { netflow: await freePort(), sflow: await freePort() };
  const baseEnv = {
    ...process.env,
    HOST: '127.0.0.1',
    ADMIN_API_KEY: adminKey,
    NATS_URL: natsUrl,
    TEMPORAL_ADDRESS: temporalAddress,
    // No speaker, but for the stack's own service when the automation scenario runs (below).
    BGP_SPEAKER_ADDRESS: 'off',
    LOG_LEVEL: 'warn',
    COLLECTOR_NETFLOW_PORT: String(collectorPorts.netflow),
    COLLECTOR_SFLOW_PORT: String(collectorPorts.sflow),
    // The api process signs decision tokens that the worker process checks: one key for both (required with a ClickHouse server).
    DECISION_SIGNING_KEY: process.env.DECISION_SIGNING_KEY ?? randomBytes(32).toString('base64url'),
    // The timed queries measure latency, not the budget: since the budget is per workspace (issue 32), the bench's one
    // workspace spent it and every scenario-9 call waited out a 429. Each query still pays its charge through NATS.
    QUERY_BUDGET_UNITS_PER_MINUTE: process.env.QUERY_BUDGET_UNITS_PER_MINUTE ?? '1000000',
    QUERY_BUDGET_BURST_UNITS: process.env.QUERY_BUDGET_BURST_UNITS ?? '1000000',
  };
  const roles = config.clickhouse.url ? ['api', 'stream-workers,temporal-worker,collector'] : ['api,stream-workers,temporal-worker,collector'];
  const launch = ({ withoutCollector, roles: own, env: ownEnv, ...o }: LaunchOptions, env: NodeJS.ProcessEnv = baseEnv) => {
    const launched = own ?? (withoutCollector ? roles.map((r) => r.split(',').filter((role) => role !== 'collector').join(',')) : roles);
    return launchService({ ...env, ...ownEnv }, launched, { ...o, cpuProfileDir: opts.cpuProfileDir });
  };
  const stopEngines = async () => {
    await Promise.all(engines.map((e) => e.stop()));
    fs.rmSync(dir, { recursive: true, force: true });
  };
  const own = { dataDir: path.join(dir, 'service'), database: `bench_${randomBytes(4).toString('hex')}` };
  const service = await launch(own, { ...baseEnv, ...router?.serviceEnv }).catch(async (err: unknown) => {
    await stopEngines();
    throw err;
  });
  return {
    ...service,
    adminKey,
    natsUrl,
    engines,
    dir,
    collectorPorts,
    router,
    launch: (o) => launch(o),
    stopService: () => service.stop(),
    async stop() {
      await service.stop();
      await stopEngines();
    },
  };
}

async function waitHealthy(url: string): Promise<void> {
  for (let i = 0; i < 300; i += 1) {
    try {
      const res = await fetch(`${url}/healthz`);
      if (res.ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error('the service did not become healthy');
}

/** Peak resident set of a process (VmHWM), in MiB. */
export function peakRssMib(pid: number): number {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = Number(/VmHWM:\s+(\d+) kB/.exec(status)?.[1] ?? 0);
  return Math.round((kb / 1024) * 10) / 10;
}
