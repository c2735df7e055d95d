import { spawn, type ChildProcessByStdio } from 'node:child_process';
import net from 'node:net';
import type { Readable } from 'node:stream';
import type { Logger } from '../../observability/logger';
import { udpPortsBoundBy, udpPortTaken } from './udp-sockets';

export interface GoFlow2Config {
  binary: string;
  /** The address the UDP listeners bind, as the API's HOST. */
  host: string;
  netflowPort: number;
  sflowPort: number;
  /** GoFlow2's own Prometheus endpoint, on loopback; the collector reads it for decoding counters. */
  metricsPort: number;
  /** Decoding goroutines per listener. */
  workers: number;
  /** Datagrams GoFlow2 holds while its decoders are busy (its buffered mode). */
  queueSize: number;
  /** How long a start waits for GoFlow2 to bind its listeners before it fails. */
  bindTimeoutMs?: number;
}

const defaultBindTimeoutMs = 15_000;

const bracketed = (host: string) => (host.includes(':') ? `[${host}]` : host);

/** GoFlow2's command line: both listeners, length-delimited protobuf on stdout, metrics on loopback. */
export function goflow2Args(c: GoFlow2Config): string[] {
  const query = `count=1&workers=${c.workers}&blocking=false&queue_size=${c.queueSize}`;
  return [
    `-listen=netflow://${bracketed(c.host)}:${c.netflowPort}/?${query},sflow://${bracketed(c.host)}:${c.sflowPort}/?${query}`,
    '-format=bin',
    '-transport=file',
    '-transport.file.sep=',
    `-addr=127.0.0.1:${c.metricsPort}`,
    '-loglevel=warn',
    '-logfmt=json',
  ];
}

/**
 * GoFlow2 as a child process of the collector, kept running by the one
 * supervisor (engines/supervisor.ts) like the embedded engines: a start
 * resolves once its UDP listeners are bound, a stop sends SIGTERM (then
 * SIGKILL). Its stdout is handed over chunk by chunk; each run starts a
 * fresh stream (`onRun`), so a frame cut by a crash is dropped.
 */
export class GoFlow2Process {
  readonly name = 'goflow2';
  private child?: ChildProcessByStdio<null, Readable, Readable>;
  lastExit?: string;

  constructor(
    private readonly config: GoFlow2Config,
    private readonly handlers: { onRun(): void; onChunk(chunk: Buffer): void },
    private readonly log: Logger,
  ) {}

  /** Always this process's own child: nobody else supervises it. */
  get owned(): boolean {
    return true;
  }

  get running(): boolean {
    return this.child !== undefined;
  }

  get pid(): number | undefined {
    return this.child?.pid;
  }

  /** GoFlow2's metrics port: the configured one, or the free port picked at start (kept across restarts). */
  get metricsPort(): number {
    return this.port;
  }
  private port = 0;

  async start(): Promise<void> {
    await this.refuseTakenPorts();
    this.port ||= this.config.metricsPort || (await freeLoopbackPort());
    this.launch();
    const timeoutMs = this.config.bindTimeoutMs ?? defaultBindTimeoutMs;
    const deadline = Date.now() + timeoutMs;
    while (!(await this.listening())) {
      if (Date.now() > deadline) {
        await this.stop();
        const c = this.config;
        throw new Error(`GoFlow2 did not bind udp ${c.host}:${c.netflowPort} and ${c.sflowPort} within ${timeoutMs} ms (last exit: ${this.lastExit ?? 'none'})`);
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  /** A listener port another process holds would only show as GoFlow2 failing to bind: said at once, with the setting to change. */
  private async refuseTakenPorts(): Promise<void> {
    const { host, netflowPort, sflowPort } = this.config;
    const ports: Array<[number, string]> = [[netflowPort, 'COLLECTOR_NETFLOW_PORT'], [sflowPort, 'COLLECTOR_SFLOW_PORT']];
    for (const [port, setting] of ports) {
      if (port > 0 && (await udpPortTaken(host, port))) throw new Error(`collector: udp port ${port} is taken by another process; set ${setting} to a free port, or stop what listens there`);
    }
  }

  /**
   * Whether the running GoFlow2 has bound both UDP listeners: a run counts as
   * up only from then, since a datagram sent before the bind is dropped.
   */
  async listening(): Promise<boolean> {
    const child = this.child;
    if (!child?.pid) return false;
    if (this.listeningRun === child) return true;
    const bound = await udpPortsBoundBy(child.pid);
    const wanted = [this.config.netflowPort, this.config.sflowPort].filter((port) => port > 0);
    const listening = bound === undefined || wanted.every((port) => bound.has(port));
    if (listening && this.child === child) this.listeningRun = child;
    return listening && this.child === child;
  }
  private listeningRun?: ChildProcessByStdio<null, Readable, Readable>;

  private launch(): void {
    const args = goflow2Args({ ...this.config, metricsPort: this.port });
    const child = spawn(this.config.binary, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    this.child = child;
    this.handlers.onRun();
    child.stdout.on('data', (chunk: Buffer) => this.handlers.onChunk(chunk));
    child.stderr.setEncoding('utf8').on('data', (text: string) => this.log.warn({ goflow2: text.trim() }, 'goflow2'));
    child.on('error', (err) => this.log.error({ err }, 'goflow2 could not be started'));
    child.on('close', (code, signal) => this.exited(child, code, signal));
  }

  private exited(child: ChildProcessByStdio<null, Readable, Readable>, code: number | null, signal: NodeJS.Signals | null): void {
    if (this.child !== child) return;
    this.child = undefined;
    this.lastExit = signal ? `signal ${signal}` : `code ${code}`;
    if (!this.stopping) this.log.error({ exit: this.lastExit }, 'goflow2 exited');
  }
  private stopping = false;

  /** Backpressure: while paused, GoFlow2 queues datagrams, then the kernel's socket buffer holds them. */
  pause(): void {
    this.child?.stdout.pause();
  }

  resume(): void {
    this.child?.stdout.resume();
  }

  /** Kills the running GoFlow2 (its output became unreadable, or it fails its liveness): the supervisor starts a fresh one. */
  kill(): void {
    this.child?.kill('SIGKILL');
  }

  async stop(): Promise<void> {
    const child = this.child;
    if (!child) return;
    this.stopping = true;
    const closed = new Promise<void>((resolve) => child.once('close', () => resolve()));
    child.kill('SIGTERM');
    const killer = setTimeout(() => child.kill('SIGKILL'), 5_000);
    await closed;
    clearTimeout(killer);
    this.stopping = false;
  }
}

function freeLoopbackPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}
