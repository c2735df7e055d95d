import fs from 'node:fs';
import path from 'node:path';
import type { ChildProcess } from 'node:child_process';
import { waitFor } from '../wait';
import { startWorkerProcess } from '../worker-process';

/**
 * One process of the service running the roles its environment names, on
 * the engines and database a cluster test gives it: started, killed with
 * SIGKILL and started again on the same data folder and port. An API
 * process is ready once its /healthz answers 200.
 */
export class RoleProcess {
  private running?: { child: ChildProcess; exited: Promise<unknown> };

  constructor(
    /** A name of its own (`api-1`, `stream-workers-2` …): its data folder and log under `dir`. */
    readonly name: string,
    private readonly dir: string,
    private readonly env: Record<string, string>,
    /** Its database and NATS prefix. */
    private readonly shared: { database: string; prefix: string },
  ) {}

  /** The API's address, when the process serves one. */
  get url(): string | undefined {
    return this.env.PORT ? `http://127.0.0.1:${this.env.PORT}` : undefined;
  }

  get pid(): number {
    const pid = this.running?.child.pid;
    if (pid === undefined || this.running?.child.exitCode !== null) throw new Error(`${this.name} is not running`);
    return pid;
  }

  get logFile(): string {
    return path.join(this.dir, `${this.name}.log`);
  }

  async start(): Promise<void> {
    const config = { clickhouse: { database: this.shared.database }, nats: { prefix: this.shared.prefix } };
    const running = startWorkerProcess(config, path.join(this.dir, this.name), this.env, this.logFile);
    this.running = running;
    if (!this.url) return;
    await waitFor(async () => {
      if (running.child.exitCode !== null) throw new Error(`${this.name} exited with ${running.child.exitCode}:\n${this.logTail()}`);
      const res = await fetch(`${this.url}/healthz`).catch(() => undefined);
      return res?.status === 200 ? true : undefined;
    }, 90_000, `${this.name} to answer healthy`);
  }

  async kill(): Promise<void> {
    this.running?.child.kill('SIGKILL');
    await this.running?.exited;
  }

  async stop(): Promise<void> {
    if (!this.running || this.running.child.exitCode !== null) return;
    this.running.child.kill('SIGTERM');
    await this.running.exited;
  }

  /** The last lines of its log, for a failure's message. */
  logTail(lines = 20): string {
    try {
      return fs.readFileSync(this.logFile, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
    } catch {
      return '(no log)';
    }
  }
}
