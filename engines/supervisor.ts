import { backoffDelayMs } from '../core/backoff';
import type { Logger } from '../observability/logger';
import { counter, type Registry } from '../observability/metrics';
import type { LocalProcess } from './local-process';

/**
 * What the supervisor needs of a process it keeps running: an engine of the
 * embedded default (a LocalProcess), GoFlow2 under the collector, or a plain
 * object in unit tests.
 */
export type SupervisedProcess = Pick<LocalProcess, 'name' | 'owned' | 'running' | 'start' | 'stop' | 'kill'>;

export interface SupervisionConfig {
  /** How often the engine's process is checked. */
  checkIntervalMs: number;
  /** The first wait before a failed restart is tried again; it doubles up to `maxBackoffMs`. */
  backoffMs: number;
  maxBackoffMs: number;
  /** How long an engine may run while failing its liveness check before it is killed and restarted. */
  livenessFailAfterMs: number;
  /**
   * A run at least this long counts as healthy: its death is restarted at
   * once. Deaths in a row each sooner than this after their start (a crash
   * loop, say on a datagram that kills the process) wait the back-off first.
   */
  healthyRunMs?: number;
}

export const defaultSupervision: SupervisionConfig = { checkIntervalMs: 500, backoffMs: 500, maxBackoffMs: 30_000, livenessFailAfterMs: 20_000 };

/** A check that the engine does its work, beyond running: failing for `livenessFailAfterMs` makes it count as dead. */
export interface Liveness {
  /** Rejects when the engine fails the check; `unknown` when it cannot tell (its client is not connected). */
  check: () => Promise<'live' | 'unknown'>;
  intervalMs: number;
  /** Called once the engine was restarted: what the check remembers of the old process is stale. */
  afterRestart?: () => void;
}

const defaultHealthyRunMs = 60_000;

const supervisorMetrics = (registry: Registry) => ({
  deaths: counter(registry, {
    name: 'nettel_engine_deaths_total',
    help: 'Supervised processes (the embedded engines, GoFlow2) found dead, by engine',
    labelNames: ['engine'] as const,
  }),
  failedRestarts: counter(registry, {
    name: 'nettel_engine_restart_failures_total',
    help: 'Restarts of a dead supervised process that failed and were tried again after a backoff, by engine',
    labelNames: ['engine'] as const,
  }),
  unresponsive: counter(registry, {
    name: 'nettel_engine_unresponsive_total',
    help: 'Supervised processes killed because they ran but failed their liveness check for too long, by engine',
    labelNames: ['engine'] as const,
  }),
  restarts: counter(registry, {
    name: 'nettel_engine_restarts_total',
    help: 'Dead supervised processes (the embedded engines, GoFlow2) started again, by engine',
    labelNames: ['engine'] as const,
  }),
});

/**
 * The one supervisor of the code base: keeps a process running, an engine
 * of the embedded default (nats-server, Temporal) or GoFlow2 under the
 * collector. A process that dies (a crash, the OOM killer, a kill -9) is
 * started again on the same port and store, with a doubling backoff while it
 * fails to come up or keeps dying soon after its start. Meanwhile the probe
 * fails, so /healthz says `degraded`, and the adapters' own clients reconnect
 * when it is back. An engine another service process owns is that process's
 * to supervise.
 */
export class EngineSupervisor {
  private timer?: NodeJS.Timeout;
  private restarting?: Promise<void>;
  private stopping = false;
  private restartCount = 0;
  private startedAt = 0;
  /** Deaths in a row, each before its run counted as healthy. */
  private quickDeaths = 0;
  private liveness?: Liveness;
  private livenessTimer?: NodeJS.Timeout;
  private failingSince?: number;
  /** A liveness check in flight: the next waits for it, so an old answer never overrides a newer one. */
  private checking = false;
  private readonly metrics;

  constructor(
    private readonly engine: SupervisedProcess,
    private readonly config: SupervisionConfig,
    private readonly deps: {
      log: Logger;
      registry: Registry;
      onRestart?: () => void;
      /** The clock a run's length and a liveness failure's age are read on; the back-off waits are timers. */
      now?: () => number;
    },
  ) {
    this.metrics = supervisorMetrics(deps.registry);
  }

  private now(): number {
    return (this.deps.now ?? Date.now)();
  }

  get name(): string {
    return this.engine.name;
  }

  async start(): Promise<void> {
    this.stopping = false;
    await this.engine.start();
    this.startedAt = this.now();
    this.timer = setInterval(() => this.check(), this.config.checkIntervalMs);
    this.timer.unref();
    if (this.liveness) {
      this.livenessTimer = setInterval(() => void this.checkLiveness(), this.liveness.intervalMs);
      this.livenessTimer.unref();
    }
  }

  /**
   * Checks the engine's work too, from start on (given before it, once the
   * clients it uses exist): an engine that runs but fails the check for
   * `livenessFailAfterMs` is killed and restarted.
   */
  watchLiveness(liveness: Liveness): void {
    this.liveness = liveness;
  }

  async stop(): Promise<void> {
    this.stopping = true;
    clearInterval(this.timer);
    clearInterval(this.livenessTimer);
    await this.restarting;
    await this.engine.stop();
  }

  /** Up while the engine runs; rejects while it is dead or being restarted. */
  probe(): Promise<{ detail: string }> {
    if (this.restarting) return Promise.reject(new Error(`${this.name} died and is being restarted`));
    // Failing for two check intervals, not one failed check: a single slow publish is no verdict.
    const failingForMs = this.failingSince === undefined ? 0 : this.now() - this.failingSince;
    if (this.liveness && failingForMs > 2 * this.liveness.intervalMs) return Promise.reject(new Error(`${this.name} fails its liveness check`));
    if (!this.engine.owned) return Promise.resolve({ detail: 'shared: the service process that started it supervises it' });
    return Promise.resolve({ detail: `supervised, ${this.restartCount} restart(s)` });
  }

  private check(): void {
    if (this.stopping || this.restarting || !this.engine.owned || this.engine.running) return;
    this.metrics.deaths.inc({ engine: this.name });
    this.deps.log.error({ engine: this.name }, 'engine died; restarting it');
    this.restarting = this.restart().finally(() => (this.restarting = undefined));
  }

  private async checkLiveness(): Promise<void> {
    if (!this.liveness || this.checking || this.stopping || this.restarting || !this.engine.running) return;
    this.checking = true;
    try {
      if ((await this.liveness.check()) === 'live') this.failingSince = undefined;
    } catch (err) {
      this.failedLiveness(err);
    } finally {
      this.checking = false;
    }
  }

  private failedLiveness(err: unknown): void {
    const now = this.now();
    this.failingSince ??= now;
    if (now - this.failingSince < this.config.livenessFailAfterMs || this.restarting || !this.engine.running) return;
    const failingForMs = now - this.failingSince;
    this.failingSince = undefined;
    this.metrics.unresponsive.inc({ engine: this.name });
    this.deps.log.error({ engine: this.name, err, failingForMs }, 'engine runs but fails its liveness check; killing it');
    this.engine.kill();
    this.check();
  }

  private async restart(): Promise<void> {
    const ranMs = this.now() - this.startedAt;
    this.quickDeaths = ranMs >= (this.config.healthyRunMs ?? defaultHealthyRunMs) ? 1 : this.quickDeaths + 1;
    // The first death after a healthy run is restarted at once; a crash loop waits the back-off.
    let failures = this.quickDeaths - 1;
    while (!this.stopping) {
      if (failures > 0) await this.wait(backoffDelayMs({ firstMs: this.config.backoffMs, maxMs: this.config.maxBackoffMs }, failures));
      if (this.stopping) return;
      try {
        await this.engine.start();
      } catch (err) {
        this.metrics.failedRestarts.inc({ engine: this.name });
        failures += 1;
        this.deps.log.error({ engine: this.name, err }, 'engine restart failed');
        continue;
      }
      // Outside the try: a hook that throws must not count as a failed start and start a second process.
      this.startedAt = this.now();
      this.restartCount += 1;
      this.metrics.restarts.inc({ engine: this.name });
      this.deps.log.warn({ engine: this.name, restarts: this.restartCount }, 'engine restarted');
      this.liveness?.afterRestart?.();
      this.deps.onRestart?.();
      return;
    }
  }

  /** In short steps, so that a stop need not wait out a long backoff. */
  private async wait(ms: number): Promise<void> {
    for (const until = Date.now() + ms; !this.stopping && Date.now() < until; ) await new Promise((resolve) => setTimeout(resolve, Math.min(100, ms)));
  }

  /** Restarts so far, for probes that say what they supervise. */
  get restarts(): number {
    return this.restartCount;
  }
}
