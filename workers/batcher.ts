/**
 * Collects pulled messages into batches: a batch is flushed when it holds
 * maxMessages or when maxWaitMs passed since its first message, whichever
 * comes first. Flushes run one at a time, in order; adding to a full batch
 * waits for its flush, so the pull backs off while ClickHouse is busy.
 */
export interface BatcherConfig {
  maxMessages: number;
  maxWaitMs: number;
  /** How often JetStream hears that a handed-off batch is still being worked on. */
  keepAliveMs: number;
}

export interface Batchable {
  working(): void;
}

export class Batcher<T extends Batchable> {
  private buffer: T[] = [];
  private timer?: NodeJS.Timeout;
  private flushing: Promise<void> = Promise.resolve();

  constructor(
    private readonly config: BatcherConfig,
    private readonly handle: (batch: T[]) => Promise<void>,
    private readonly onError: (err: unknown, batch: T[]) => void,
  ) {}

  /** Resolves at once, or when the batch the message filled was handled. */
  async add(message: T): Promise<void> {
    this.buffer.push(message);
    if (this.buffer.length >= this.config.maxMessages) await this.flush();
    else this.timer ??= setTimeout(() => void this.flush(), this.config.maxWaitMs);
  }

  /** Hands the buffer to a flush queued behind the running one; resolves when every flush so far is done. */
  flush(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    const batch = this.buffer;
    this.buffer = [];
    if (batch.length === 0) return this.flushing;
    // From the hand-off until it is acknowledged, the batch must not be redelivered to another worker.
    const heartbeat = this.keepAlive(batch);
    this.flushing = this.flushing
      .then(() => this.handle(batch))
      .catch((err: unknown) => this.onError(err, batch))
      .finally(() => clearInterval(heartbeat));
    return this.flushing;
  }

  private keepAlive(batch: T[]): NodeJS.Timeout {
    return setInterval(() => {
      for (const m of batch) m.working();
    }, this.config.keepAliveMs);
  }
}
