import { backoffDelayMs, type Backoff } from '../../core/backoff';
import type { Logger } from '../../observability/logger';
import { ConsumeInterrupted, type OpenedConsumer } from './consumer';
import { Pause } from './pause';

/** Waits between re-opens of the consumer (core/backoff). */
export type ReopenBackoff = Backoff;

export const defaultReopenBackoff: ReopenBackoff = { firstMs: 250, maxMs: 5_000 };

/** The wait before re-open attempt number `attempt` (0 for the first after a failure). */
export const reopenDelayMs = (attempt: number, backoff: ReopenBackoff): number => backoffDelayMs(backoff, attempt + 1);

interface BatchSink<M> {
  add(message: M): Promise<void>;
  flush(): Promise<void>;
}

type State = { consuming: true } | { consuming: false; reason: string };

/**
 * Why a first open may fail on a server that is busy or still electing its
 * leaders (a restart on a large backlog, a cluster node killed): such an open
 * is tried again until `startPatienceMs`; any other reason (no stream, no
 * permission) fails the start at once.
 */
const busyServerReasons: ReadonlySet<string> = new Set(['timeout', 'no_responders', 'disconnected', 'connection_closed', 'heartbeats_missed']);

/** How long a start waits out a busy server by default. */
export const defaultStartPatienceMs = 60_000;

/**
 * The one consume loop of the code base: every JetStream consumer (the
 * telemetry lanes, the webhook fan-out and deliveries) is read through it.
 * It keeps consuming until it is stopped. When the pull ends or fails (the
 * consumer deleted, the server restarted, the connection lost), the messages
 * already taken are still handled and acknowledged, then the consumer is
 * opened again after a growing delay, as often as it takes. Each re-open
 * counts in `restarts` by the reason consuming stopped; between a failure
 * and a successful re-open, probe() rejects, so /healthz shows it.
 */
export class ConsumeLoop<M> {
  private running = false;
  private state: State = { consuming: false, reason: 'not started' };
  private current?: OpenedConsumer<M>;
  private loop?: Promise<void>;
  private readonly pause = new Pause();
  /** Since when no pull has delivered or held: set when a pull ends, cleared by a message or a pull that lasts. */
  private troubleSince?: number;
  private openedAt = 0;

  constructor(
    private readonly backoff: ReopenBackoff,
    private readonly deps: {
      source: { open(): Promise<OpenedConsumer<M>> };
      batches: BatchSink<M>;
      restarts: { inc(labels: { reason: string }): void };
      log: Logger;
      /** The consumer, as logs name it. */
      consumer: string;
      now?: () => number;
      /** How long the first open waits out a busy server (busyServerReasons); defaultStartPatienceMs. */
      startPatienceMs?: number;
    },
  ) {}

  /**
   * Opens the first pull: a worker that cannot consume at all fails its
   * start, but a busy server is waited out (each try counted in `restarts`).
   */
  async start(): Promise<void> {
    const now = this.deps.now ?? Date.now;
    const deadline = now() + (this.deps.startPatienceMs ?? defaultStartPatienceMs);
    for (let attempt = 0; ; attempt += 1) {
      try {
        const first = await this.deps.source.open();
        this.running = true;
        this.loop = this.run(first);
        return;
      } catch (err) {
        const reason = err instanceof ConsumeInterrupted ? err.reason : undefined;
        if (reason === undefined || !busyServerReasons.has(reason) || now() >= deadline) throw err;
        this.deps.restarts.inc({ reason });
        this.deps.log.warn({ consumer: this.deps.consumer, reason, attempt, retryInMs: reopenDelayMs(attempt, this.backoff) }, 'unable to open the consumer at start; the server is busy, retrying');
        await new Promise((resolve) => setTimeout(resolve, reopenDelayMs(attempt, this.backoff)));
      }
    }
  }

  async stop(): Promise<void> {
    this.running = false;
    this.current?.stop();
    this.pause.wake();
    await this.loop;
  }

  /**
   * Whether JetStream lets this worker consume: rejects while every pull ends
   * at once (a consumer whose store refuses writes, say), however briefly
   * each one opens. For the embedded nats-server's liveness.
   */
  canConsume(): Promise<void> {
    const now = (this.deps.now ?? Date.now)();
    if (this.state.consuming && now - this.openedAt >= this.backoff.maxMs) this.troubleSince = undefined;
    if (this.troubleSince === undefined) return Promise.resolve();
    return Promise.reject(new Error(`pulls fail since ${new Date(this.troubleSince).toISOString()}`));
  }

  /** Resolves while messages flow in; rejects, with the reason, while the worker cannot consume. */
  probe(): Promise<{ detail: string }> {
    if (this.running && this.state.consuming) return Promise.resolve({ detail: 'consuming' });
    const reason = this.state.consuming ? 'stopped' : this.state.reason;
    return Promise.reject(new Error(`not consuming: ${reason}`));
  }

  private async run(first: OpenedConsumer<M>): Promise<void> {
    const now = this.deps.now ?? Date.now;
    let opened: OpenedConsumer<M> | undefined = first;
    let attempt = 0;
    while (this.running) {
      if (opened) {
        const openedAt = now();
        await this.consume(opened);
        // A pull that failed at once does not reset the delay: a consumer that keeps failing is not hammered.
        if (now() - openedAt >= this.backoff.maxMs) attempt = 0;
        if (!this.running) break;
      }
      await this.pause.for(reopenDelayMs(attempt, this.backoff));
      attempt += 1;
      if (!this.running) break;
      opened = await this.reopen(attempt);
    }
    await this.deps.batches.flush();
  }

  /** Feeds one pull's messages to the batches until it ends; then flushes what was taken. */
  private async consume(opened: OpenedConsumer<M>): Promise<void> {
    this.current = opened;
    this.state = { consuming: true };
    this.openedAt = (this.deps.now ?? Date.now)();
    let reason = 'ended';
    let error: unknown;
    try {
      for await (const m of opened.messages) {
        this.troubleSince = undefined;
        await this.deps.batches.add(m);
      }
    } catch (err) {
      reason = err instanceof ConsumeInterrupted ? err.reason : 'error';
      error = err;
    }
    this.current = undefined;
    if (this.running) {
      this.troubleSince ??= (this.deps.now ?? Date.now)();
      this.state = { consuming: false, reason };
      this.deps.log.warn({ consumer: this.deps.consumer, reason, err: error }, 'consumer stopped; handling what was taken, then opening it again');
    }
    // Messages already taken are written and acknowledged before anything else is pulled.
    await this.deps.batches.flush();
  }

  private async reopen(attempt: number): Promise<OpenedConsumer<M> | undefined> {
    const reason = this.state.consuming ? 'ended' : this.state.reason;
    this.deps.restarts.inc({ reason });
    try {
      const opened = await this.deps.source.open();
      if (!this.running) {
        opened.stop();
        return undefined;
      }
      this.deps.log.info({ consumer: this.deps.consumer, reason, attempt }, 'consumer open again');
      return opened;
    } catch (err) {
      const next = err instanceof ConsumeInterrupted ? err.reason : 'open_failed';
      this.state = { consuming: false, reason: next };
      this.deps.log.warn({ consumer: this.deps.consumer, err, reason: next, attempt, retryInMs: reopenDelayMs(attempt, this.backoff) }, 'unable to open the consumer; retrying');
      return undefined;
    }
  }
}
