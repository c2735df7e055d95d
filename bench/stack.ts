import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { localNatsServer, localTemporalServer } from '../engines/engines';
import { freePort, type LocalProcess } from '../engines/local-process';
import { loadConfig, type Config } from '../service/config';
import { createLogger, type Logger } from '../observability/logger';

/**
 * The stack under measurement, started as `npm start` starts it: the
 * compiled service (dist/service/main.js) on engines the environment names,
 * or on local engines in a fresh folder. With chDB every role shares one
 * process; with CLICKHOUSE_URL the API and the workers run as two processes.
 */
export interface BenchStack {
  url: string;
  adminKey: string;
  natsUrl: string;
  processes: Array<{ role: string; child: ChildProcess }>;
  engines: LocalProcess[];
  dir: string;
  stop(): Promise<void>;
}

const mainJs = path.resolve(__dirname, '../service/main.js');

/** Local engines in `dir` for what the environment does not name. */
async function benchEngines(config: Config, dir: string, log: Logger) {
  const engines: LocalProcess[] = [];
  let natsUrl = config.nats.url;
  if (!natsUrl) {
    const port = await freePort();
    engines.push(localNatsServer({ dir: path.join(dir, 'nats'), port, binPath: config.binPath }, log));
    natsUrl = `nats://127.0.0.1:${port}`;
  }
  let temporalAddress = config.temporal.address;
  if (!temporalAddress) {
    const port = await freePort();
    engines.push(localTemporalServer({ dir: path.join(dir, 'temporal'), port, binPath: config.binPath, cli: config.temporal.cli, toolsDir: config.toolsDir }, log));
    temporalAddress = `127.0.0.1:${port}`;
  }
  await Promise.all(engines.map((e) => e.start()));
  return { engines, natsUrl, temporalAddress };
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

export async function startBenchStack(opts: { cpuProfileDir?: string }): Promise<BenchStack> {
  const config = loadConfig(process.env);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'nettel-bench-'));
  const { engines, natsUrl, temporalAddress } = await benchEngines(config, dir, createLogger('warn', 'bench'));
  const adminKey = `nta_bench_${randomBytes(16).toString('hex')}`;
  const port = await freePort();
  const env = {
    ...process.env,
    DATA_DIR: path.join(dir, 'service'),
    HOST: '127.0.0.1',
    ADMIN_API_KEY: adminKey,
    NATS_URL: natsUrl,
    TEMPORAL_ADDRESS: temporalAddress,
    CLICKHOUSE_DATABASE: `bench_${randomBytes(4).toString('hex')}`,
    NATS_PREFIX: `bench${randomBytes(4).toString('hex')}`,
    LOG_LEVEL: 'warn',
  };
  const roles = config.clickhouse.url ? ['api', 'stream-workers,temporal-worker'] : ['api,stream-workers,temporal-worker'];
  const processes: BenchStack['processes'] = [];
  for (const role of roles) processes.push({ role, child: await startService(role, env, port, opts.cpuProfileDir) });
  const url = `http://127.0.0.1:${port}`;
  await waitHealthy(url);
  return {
    url,
    adminKey,
    natsUrl,
    processes,
    engines,
    dir,
    async stop() {
      for (const { child } of [...processes].reverse()) {
        const exited = new Promise((r) => child.once('exit', r));
        child.kill('SIGINT');
        await exited;
      }
      await Promise.all(engines.map((e) => e.stop()));
      fs.rmSync(dir, { recursive: true, force: true });
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
