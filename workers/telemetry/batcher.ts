/**
 * Collects pulled messages into batches: a batch is flushed when it holds
 * maxMessages or maxBytes, or when maxWaitMs passed since its first message,
 * whichever comes first; but a batch that is due while a flush is still
 * running keeps growing until that flush ends (group commit). Every insert
 * into ClickHouse costs a fixed price (a part per table and per rollup
 * view), so under load batches grow to what an insert can carry instead of
 * queueing many small ones behind each other; at low load a message still
 * waits at most maxWaitMs. Flushes run one at a time, in order; adding to a
 * full batch waits for its flush, so the pull backs off while ClickHouse is
 * busy.
 */
export interface BatcherConfig {
  maxMessages: number;
  /** A batch whose messages' payloads reach this many bytes is flushed (bounds an insert's memory). */
  maxBytes: number;
  maxWaitMs: number;
  /** How often JetStream hears that a held message (due, or handed off) is still being worked on. */
  keepAliveMs: number;
}

export interface Batchable {
  readonly data: { readonly length: number };
  working(): void;
}

export class Batcher<T extends Batchable> {
  private buffer: T[] = [];
  private bufferBytes = 0;
  private timer?: NodeJS.Timeout;
  /** Set while the buffer is due but waits for the running flush: it is kept alive meanwhile. */
  private waitingHeartbeat?: NodeJS.Timeout;
  private running = 0;
  private flushing: Promise<void> = Promise.resolve();

  constructor(
    private readonly config: BatcherConfig,
    private readonly handle: (batch: T[]) => Promise<void>,
    private readonly onError: (err: unknown, batch: T[]) => void,
  ) {}

  /** Resolves at once, or when the batch the message filled was handled. */
  async add(message: T): Promise<void> {
    this.buffer.push(message);
    this.bufferBytes += message.data.length;
    if (this.buffer.length >= this.config.maxMessages || this.bufferBytes >= this.config.maxBytes) await this.flush();
    else if (!this.waitingHeartbeat) this.timer ??= setTimeout(() => this.due(), this.config.maxWaitMs);
  }

  /** The buffer waited maxWaitMs: flushed now if nothing runs, else as soon as the running flush ends. */
  private due(): void {
    this.timer = undefined;
    if (this.running === 0) {
      void this.flush();
      return;
    }
    this.waitingHeartbeat = setInterval(() => {
      for (const m of this.buffer) m.working();
    }, this.config.keepAliveMs);
  }

  /** Hands the buffer to a flush queued behind the running one; resolves when every flush so far is done. */
  flush(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    clearInterval(this.waitingHeartbeat);
    this.waitingHeartbeat = undefined;
    const batch = this.buffer;
    this.buffer = [];
    this.bufferBytes = 0;
    if (batch.length === 0) return this.flushing;
    // From the hand-off until it is acknowledged, the batch must not be redelivered to another worker.
    const heartbeat = this.keepAlive(batch);
    this.running += 1;
    this.flushing = this.flushing
      .then(() => this.handle(batch))
      .catch((err: unknown) => this.onError(err, batch))
      .finally(() => {
        clearInterval(heartbeat);
        this.running -= 1;
        if (this.running === 0 && this.waitingHeartbeat) void this.flush();
      });
    return this.flushing;
  }

  private keepAlive(batch: T[]): NodeJS.Timeout {
    return setInterval(() => {
      for (const m of batch) m.working();
    }, this.config.keepAliveMs);
  }
}
