/**
 * Collects pulled messages into batches: a batch is flushed when it holds
 * maxMessages or maxBytes, or when maxWaitMs passed since its first message,
 * whichever comes first; but a batch that is due while a batch is still
 * being written keeps growing until that write ends (group commit). Every
 * insert into ClickHouse costs a fixed price (a part per table and per
 * rollup view), so under load batches grow to what an insert can carry
 * instead of queueing many small ones behind each other; at low load a
 * message still waits at most maxWaitMs.
 *
 * Batches are handled in order, in two stages the handler marks: its write,
 * then the rest (what follows the write, up to the acknowledgements). The
 * handler calls `written` when the next batch's write may start; one that
 * never calls it is handled one batch at a time. Adding to a full batch
 * waits for that batch's write, so the pull backs off while ClickHouse is
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

/** Handles one batch; calls `written` once the next batch may be written (at the latest, it is called when the handling settles). */
export type BatchHandling<T> = (batch: T[], written: () => void) => Promise<void>;

export class Batcher<T extends Batchable> {
  private buffer: T[] = [];
  private bufferBytes = 0;
  private timer?: NodeJS.Timeout;
  /** Set while the buffer is due but waits for the running write: it is kept alive meanwhile. */
  private waitingHeartbeat?: NodeJS.Timeout;
  /** Batches handed over whose write has not ended. */
  private writing = 0;
  /** Resolves when the last batch handed over was written. */
  private lastWritten: Promise<void> = Promise.resolve();
  /** Resolves when every batch handed over so far was handled. */
  private allHandled: Promise<void> = Promise.resolve();

  constructor(
    private readonly config: BatcherConfig,
    private readonly handle: BatchHandling<T>,
    private readonly onError: (err: unknown, batch: T[]) => void,
  ) {}

  /** Resolves at once, or when the batch the message filled was written. */
  async add(message: T): Promise<void> {
    this.buffer.push(message);
    this.bufferBytes += message.data.length;
    if (this.buffer.length >= this.config.maxMessages || this.bufferBytes >= this.config.maxBytes) await this.handOff();
    else if (!this.waitingHeartbeat) this.timer ??= setTimeout(() => this.due(), this.config.maxWaitMs);
  }

  /** The buffer waited maxWaitMs: flushed now if no batch is being written, else as soon as that write ends. */
  private due(): void {
    this.timer = undefined;
    if (this.writing === 0) {
      void this.handOff();
      return;
    }
    this.waitingHeartbeat = setInterval(() => {
      for (const m of this.buffer) m.working();
    }, this.config.keepAliveMs);
  }

  /** Hands the buffer over; resolves when every batch handed over so far was handled. */
  flush(): Promise<void> {
    void this.handOff();
    return this.allHandled;
  }

  /** Hands the buffer to be written after the batches before it; resolves when it was written. */
  private handOff(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    clearInterval(this.waitingHeartbeat);
    this.waitingHeartbeat = undefined;
    const batch = this.buffer;
    this.buffer = [];
    this.bufferBytes = 0;
    if (batch.length === 0) return this.lastWritten;
    // From the hand-off until it is acknowledged, the batch must not be redelivered to another worker.
    const heartbeat = this.keepAlive(batch);
    this.writing += 1;
    let handled: Promise<void> = Promise.resolve();
    const written = this.lastWritten.then(
      () =>
        new Promise<void>((resolve) => {
          let ended = false;
          const writeEnded = () => {
            if (ended) return;
            ended = true;
            this.writing -= 1;
            resolve();
            if (this.writing === 0 && this.waitingHeartbeat) void this.handOff();
          };
          handled = this.handle(batch, writeEnded)
            .catch((err: unknown) => this.onError(err, batch))
            .finally(() => {
              clearInterval(heartbeat);
              writeEnded();
            });
        }),
    );
    this.lastWritten = written;
    const before = this.allHandled;
    this.allHandled = written.then(() => Promise.all([before, handled])).then(() => undefined);
    return written;
  }

  private keepAlive(batch: T[]): NodeJS.Timeout {
    return setInterval(() => {
      for (const m of batch) m.working();
    }, this.config.keepAliveMs);
  }
}
