import { spawn } from 'node:child_process';
import dgram from 'node:dgram';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import type { Logger } from '../observability/logger';

/**
 * A local engine process (nats-server, clickhouse-server, the Temporal dev
 * server) owned by this stack. Its pid file lives in its data folder, so a
 * second start on the same folder finds and reuses a process that still runs.
 */
export interface LocalProcessSpec {
  name: string;
  command: string;
  args: string[];
  /** Folder for the pid file and log; the engine's own store sits inside it too. */
  dir: string;
  port: number;
  /** The settings that choose the engine's ports (`EMBEDDED_NATS_PORT`, …), named when a port is taken; extra ports are checked too. */
  portSettings?: Array<{ port: number; setting: string }>;
  /** Resolves true once the engine answers; defaults to a TCP connect on `port`. */
  isReady?: () => Promise<boolean>;
  startTimeoutMs?: number;
  /** Sent to a process this one adopts, so it reads its config again (nats-server reloads on SIGHUP). */
  reloadSignal?: NodeJS.Signals;
  /** The engine's whole environment (a config may name variables of it); unset, this process's. */
  env?: NodeJS.ProcessEnv;
}

export class LocalProcess {
  private processId?: number;
  private reused = false;

  constructor(
    private readonly spec: LocalProcessSpec,
    private readonly log: Logger,
  ) {}

  get name(): string {
    return this.spec.name;
  }

  /** The engine's process id while it runs. */
  get pid(): number | undefined {
    return this.processId;
  }

  /** Started or adopted by this process (not shared with the service process that owns it). */
  get owned(): boolean {
    return this.processId !== undefined;
  }

  /** Whether the process this one started or adopted is alive. */
  get running(): boolean {
    return this.processId !== undefined && isAlive(this.processId);
  }

  get pidFile(): string {
    return path.join(this.spec.dir, `${this.spec.name}.pid`);
  }

  /** The service process that started (or adopted) the engine and stops it. */
  private get ownerFile(): string {
    return path.join(this.spec.dir, `${this.spec.name}.owner`);
  }

  async start(): Promise<void> {
    fs.mkdirSync(this.spec.dir, { recursive: true });
    const existing = readPid(this.pidFile);
    // A pid file outlives its process, and the pid may since be another program's: only a process started on this folder counts.
    if (existing && isAlive(existing) && startedOn(existing, this.spec.dir) && (await this.ready())) {
      const owner = readPid(this.ownerFile);
      if (owner && owner !== process.pid && isAlive(owner)) {
        // Another service process runs on this engine: share it, and leave stopping it to that process.
        this.log.info({ engine: this.spec.name, pid: existing, owner }, 'sharing an engine another process owns');
        return;
      }
      if (!runsBinary(existing, this.spec.command)) {
        // Left behind by an earlier release (another binary, say Debian's nats-server before 2.15.2): replace it.
        this.log.warn({ engine: this.spec.name, pid: existing, command: this.spec.command }, 'replacing an engine left running with another binary');
        await stopProcess(existing);
      } else {
        // Left behind by a service that died: adopt it, and stop it on exit.
        this.adopt(existing);
        return;
      }
    }
    await this.spawnEngine();
  }

  private adopt(existing: number): void {
    this.processId = existing;
    this.reused = true;
    fs.writeFileSync(this.ownerFile, String(process.pid));
    // Its config may have changed since it started (say, credentials added): it reads it again.
    if (this.spec.reloadSignal) signal(existing, this.spec.reloadSignal);
    this.log.info({ engine: this.spec.name, pid: existing, port: this.spec.port }, 'reusing running engine');
  }

  private async spawnEngine(): Promise<void> {
    const ports = this.spec.portSettings ?? [{ port: this.spec.port, setting: undefined }];
    for (const { port, setting } of ports) {
      if (!(await portInUse(port))) continue;
      const hint = setting ? `; set ${setting} to a free port, or stop what listens there` : '';
      throw new Error(`${this.spec.name}: port ${port} is taken by another process${hint}`);
    }
    const logFd = fs.openSync(path.join(this.spec.dir, `${this.spec.name}.log`), 'a');
    // Detached: a Ctrl-C in the terminal reaches only the service, which then
    // stops the engines itself in order, after its own components flushed.
    const child = spawn(this.spec.command, this.spec.args, { detached: true, stdio: ['ignore', logFd, logFd], env: this.spec.env });
    fs.closeSync(logFd);
    const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
    const failedToSpawn = new Promise<Error>((resolve) => child.once('error', resolve));
    child.unref();
    if (!child.pid) throw new Error(`${this.spec.name}: unable to spawn ${this.spec.command}: ${await failedToSpawn}`);
    this.processId = child.pid;
    fs.writeFileSync(this.pidFile, String(child.pid));
    fs.writeFileSync(this.ownerFile, String(process.pid));
    const deadline = Date.now() + (this.spec.startTimeoutMs ?? 60_000);
    let exitCode: number | null | undefined;
    void exited.then((code) => (exitCode = code));
    while (Date.now() < deadline) {
      if (exitCode !== undefined) {
        const logFile = path.join(this.spec.dir, `${this.spec.name}.log`);
        throw new Error(`${this.spec.name} exited with code ${exitCode}; its log (${logFile}) ends: ${logTail(logFile)}`);
      }
      if (await this.ready()) {
        this.log.info({ engine: this.spec.name, pid: child.pid, port: this.spec.port }, 'engine started');
        return;
      }
      await sleep(100);
    }
    await this.stop();
    throw new Error(`${this.spec.name} did not become ready on port ${this.spec.port}`);
  }

  private async ready(): Promise<boolean> {
    return this.spec.isReady ? this.spec.isReady().catch(() => false) : portInUse(this.spec.port);
  }

  /** SIGKILL, for an engine that runs but no longer works: its supervisor starts it again. */
  kill(): void {
    if (this.processId) signal(this.processId, 'SIGKILL');
  }

  async stop(): Promise<void> {
    const pid = this.processId;
    if (!pid) return;
    this.processId = undefined;
    await stopProcess(pid);
    fs.rmSync(this.pidFile, { force: true });
    fs.rmSync(this.ownerFile, { force: true });
    this.log.info({ engine: this.spec.name, pid, reused: this.reused }, 'engine stopped');
  }
}

/** The last lines of an engine's log, so the error that reports its exit says why (the folder may be gone when someone looks). */
function logTail(file: string, lines = 5): string {
  try {
    const text = fs.readFileSync(file, 'utf8');
    return text.slice(-4096).trimEnd().split('\n').slice(-lines).join(' | ') || '(empty)';
  } catch {
    return '(unreadable)';
  }
}

/** SIGTERM, then SIGKILL after 15 s. */
async function stopProcess(pid: number): Promise<void> {
  signal(pid, 'SIGTERM');
  const deadline = Date.now() + 15_000;
  while (isAlive(pid) && Date.now() < deadline) await sleep(50);
  if (isAlive(pid)) signal(pid, 'SIGKILL');
}

/** Whether the process's command line names this folder (each engine's arguments do), as Linux's /proc tells; elsewhere, assumed so. */
function startedOn(pid: number, dir: string): boolean {
  try {
    return fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(path.resolve(dir));
  } catch {
    return !fs.existsSync('/proc/self/cmdline');
  }
}

/** Whether the process runs this executable, as Linux's /proc tells; where it cannot tell, it assumes so (and adopts). */
function runsBinary(pid: number, command: string): boolean {
  try {
    return fs.realpathSync(`/proc/${pid}/exe`) === fs.realpathSync(command);
  } catch {
    return true;
  }
}

function readPid(file: string): number | undefined {
  try {
    const pid = Number(fs.readFileSync(file, 'utf8').trim());
    return Number.isInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

/** Whether a process with this id exists (a zombie counts until it is reaped). */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Sends a signal, if the process is still there. */
export function signal(pid: number, sig: NodeJS.Signals): void {
  try {
    process.kill(pid, sig);
  } catch {
    // Already gone: nothing left to stop.
  }
}

export function portInUse(port: number, host = '127.0.0.1'): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ port, host });
    socket.setTimeout(1000);
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('timeout', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', () => resolve(false));
  });
}

/**
 * A port free on loopback for a test or bench engine, chosen below the kernel's
 * ephemeral range: a port the kernel handed out and took back can be given to
 * any outgoing connection of a parallel test before the engine binds it (a
 * gobgpd once lost its BGP port that way); ports below the range are never
 * given out by the kernel. Free for TCP and UDP both (collectors listen on UDP).
 */
export async function freePort(): Promise<number> {
  const highest = ephemeralLow() - 1;
  for (let attempt = 0; attempt < 200; attempt += 1) {
    const port = LOWEST_CHOSEN_PORT + Math.floor(Math.random() * (highest - LOWEST_CHOSEN_PORT + 1));
    if (chosenPorts.has(port)) continue;
    chosenPorts.add(port); // before the checks, so concurrent calls never pick the same port
    if ((await canBind(port, 'tcp')) && (await canBind(port, 'udp'))) return port;
  }
  throw new Error(`no free port between ${LOWEST_CHOSEN_PORT} and ${highest}`);
}

/** Below this, the well-known and registered ports of services a machine may run. */
const LOWEST_CHOSEN_PORT = 10_000;
/** Ports this process chose or found taken: never handed out twice, even once their engine has stopped. */
const chosenPorts = new Set<number>();

function ephemeralLow(): number {
  try {
    const low = Number(fs.readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
    if (Number.isInteger(low) && low > LOWEST_CHOSEN_PORT + 1_000) return low;
  } catch {
    // not Linux: the IANA ephemeral range starts at 49152
  }
  return 49_152;
}

function canBind(port: number, protocol: 'tcp' | 'udp'): Promise<boolean> {
  return new Promise((resolve) => {
    if (protocol === 'udp') {
      const socket = dgram.createSocket('udp4');
      socket.once('error', () => resolve(false));
      socket.bind(port, '127.0.0.1', () => socket.close(() => resolve(true)));
      return;
    }
    const server = net.createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
