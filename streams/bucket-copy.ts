import type { KV, KvEntry, QueuedIterator } from 'nats';

/** How long a read waits for the watch to deliver what the stream already holds before reading the bucket itself. */
const catchUpMs = 2_000;

/**
 * A key-value bucket's entries as a watch delivers them, kept in this
 * process: reading every entry costs one request (the bucket stream's last
 * sequence) instead of one per key. A read waits until the watch has
 * delivered that sequence, so it sees every write made anywhere before it,
 * as a direct read would. nats.js's watch is an ordered consumer that
 * recreates itself after a gap or missed heartbeats (a restarted server);
 * while it has ended or lags, `entries()` answers undefined and the caller
 * reads the bucket itself.
 */
export class BucketCopy {
  /** Each key's last revision and text (none: deleted or purged, kept so an older revision never comes back). */
  private readonly latest = new Map<string, { revision: number; text?: string }>();
  private seen = 0;
  private watcher?: QueuedIterator<KvEntry>;
  private live = false;
  private readonly waiting = new Set<() => void>();

  constructor(
    private readonly kv: KV,
    /** The bucket stream's last sequence, asked of the server. */
    private readonly lastSequence: () => Promise<number>,
  ) {}

  async start(): Promise<void> {
    this.watcher = await this.kv.watch({ key: '>' });
    this.live = true;
    void this.follow(this.watcher);
  }

  stop(): void {
    this.watcher?.stop();
    this.live = false;
  }

  /** Every key that holds a value, its text and its revision, as of now; undefined when the copy cannot vouch for that. */
  async entries(): Promise<Array<[string, string, number]> | undefined> {
    if (!this.live) return undefined;
    const last = await this.lastSequence();
    if (this.seen < last && !(await this.caughtUp(last))) return undefined;
    const out: Array<[string, string, number]> = [];
    for (const [key, { text, revision }] of this.latest) if (text !== undefined) out.push([key, text, revision]);
    return out;
  }

  private async follow(watcher: QueuedIterator<KvEntry>): Promise<void> {
    try {
      for await (const entry of watcher) {
        const known = this.latest.get(entry.key);
        if (!known || known.revision < entry.revision) this.latest.set(entry.key, { revision: entry.revision, ...(entry.operation === 'PUT' ? { text: entry.string() } : {}) });
        this.seen = Math.max(this.seen, entry.revision);
        for (const wake of this.waiting) wake();
      }
    } catch {
      // The watch ended with an error (its consumer could not be recreated): reads go to the bucket from now on.
    } finally {
      this.live = false;
      for (const wake of this.waiting) wake();
    }
  }

  private caughtUp(sequence: number): Promise<boolean> {
    return new Promise((resolve) => {
      const wake = () => {
        if (this.seen < sequence && this.live) return;
        clearTimeout(timer);
        this.waiting.delete(wake);
        resolve(this.seen >= sequence);
      };
      const timer = setTimeout(() => {
        this.waiting.delete(wake);
        resolve(false);
      }, catchUpMs);
      this.waiting.add(wake);
    });
  }
}
