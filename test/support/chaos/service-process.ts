import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { freePort, isAlive, signal } from '../../../engines/local-process';
import { embeddedNatsPassword, embeddedNatsUser } from '../../../service/roles/engines';
import { waitFor } from '../wait';

const mainJs = path.resolve(__dirname, '../../../dist/service/main.js');

/** The local engines `npm start` runs, by the folder and name of their pid files under DATA_DIR. */
export const embeddedEngines = { nats: ['nats', 'nats-server'], temporal: ['temporal', 'temporal'] } as const;
export type EmbeddedEngine = keyof typeof embeddedEngines;

/** The process id of an embedded engine a service started on `dataDir`, from its pid file. */
export function enginePidIn(dataDir: string, engine: EmbeddedEngine): number {
  const [dir, name] = embeddedEngines[engine];
  return Number(fs.readFileSync(path.join(dataDir, dir, `${name}.pid`), 'utf8'));
}

/**
 * The built service run as `npm start` runs it (`node dist/service/main.js`,
 * the embedded engines it starts and supervises), on free ports and a data
 * folder of its own, so a test can kill its whole process tree with SIGKILL
 * and start it again on the same data.
 */
export class ServiceProcess {
  private child?: ChildProcess;
  private exited?: Promise<unknown>;
  private env?: Record<string, string>;
  url = '';

  constructor(
    readonly dataDir: string,
    readonly adminKey: string,
    private readonly extraEnv: Record<string, string>,
  ) {}

  async start(): Promise<void> {
    this.env ??= await this.environment();
    fs.mkdirSync(this.dataDir, { recursive: true });
    const log = fs.openSync(path.join(this.dataDir, 'service.log'), 'a');
    const child = spawn(process.execPath, ['--enable-source-maps', mainJs], { env: this.env, stdio: ['ignore', log, log] });
    fs.closeSync(log);
    this.child = child;
    this.exited = new Promise((resolve) => child.once('exit', resolve));
    this.url = `http://127.0.0.1:${this.env.PORT}`;
    await waitFor(async () => {
      if (child.exitCode !== null) throw new Error(`the service exited with ${child.exitCode}; the end of its log:\n${this.logTail()}`);
      const res = await fetch(`${this.url}/healthz`).catch(() => undefined);
      return res?.status === 200 ? true : undefined;
    }, 120_000, 'the service to be healthy');
  }

  /** The last lines of the service's log: the test's folder is gone when a failure is read. */
  private logTail(lines = 15): string {
    try {
      return fs.readFileSync(path.join(this.dataDir, 'service.log'), 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
    } catch {
      return '(no log)';
    }
  }

  private async environment(): Promise<Record<string, string>> {
    const [port, nats, temporal, ui] = await Promise.all([freePort(), freePort(), freePort(), freePort()]);
    return {
      ...(process.env as Record<string, string>),
      PORT: String(port),
      HOST: '127.0.0.1',
      DATA_DIR: this.dataDir,
      ADMIN_API_KEY: this.adminKey,
      NATS_URL: '',
      TEMPORAL_ADDRESS: '',
      EMBEDDED_NATS_PORT: String(nats),
      EMBEDDED_TEMPORAL_PORT: String(temporal),
      EMBEDDED_TEMPORAL_UI_PORT: String(ui),
      // The chaos suite proves the telemetry path; the speaker's own kills are the BGP tests'.
      BGP_SPEAKER_ADDRESS: 'off',
      ROLES: 'api,stream-workers,temporal-worker',
      LOG_LEVEL: 'warn',
      ENGINE_CHECK_INTERVAL_MS: '200',
      ENGINE_RESTART_BACKOFF_MS: '200',
      NATS_ACK_WAIT_MS: '5000',
      WORKER_MAX_WAIT_MS: '50',
      ...this.extraEnv,
    };
  }

  /** The embedded nats-server's address and generated credentials, for a client of the test's. */
  get nats(): { servers: string; user: string; pass: string } {
    return { servers: `127.0.0.1:${this.env?.EMBEDDED_NATS_PORT}`, user: embeddedNatsUser, pass: embeddedNatsPassword(this.dataDir) };
  }

  /** The same as one URL (credentials in it), for a process of the test's that shares the server. */
  get natsUrl(): string {
    const { servers, user, pass } = this.nats;
    return `nats://${user}:${encodeURIComponent(pass)}@${servers}`;
  }

  /** The process id of an engine the service started, from its pid file. */
  enginePid(engine: EmbeddedEngine): number {
    return enginePidIn(this.dataDir, engine);
  }

  /** SIGKILL to the service and every engine it runs, as a power cut of the process tree would leave them. */
  async killTree(): Promise<void> {
    const pids = [this.child?.pid, ...Object.keys(embeddedEngines).map((e) => this.enginePid(e as EmbeddedEngine))];
    for (const pid of pids) if (pid) signal(pid, 'SIGKILL');
    await this.exited;
    await waitFor(() => Promise.resolve(pids.every((pid) => !pid || !isAlive(pid)) ? true : undefined), 10_000, 'the tree to die');
  }

  async stop(): Promise<void> {
    if (!this.child || this.child.exitCode !== null) return;
    this.child.kill('SIGTERM');
    await this.exited;
  }
}

