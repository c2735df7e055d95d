import { randomBytes } from 'node:crypto';
import os from 'node:os';
import { OpenedBucket } from './kv-bucket';
import type { NatsClient } from './nats-client';

export interface LeaseConfig {
  /** The bucket the lease's key lives in: one of its own, since its time to live is the bucket's. */
  bucket: string;
  /** The thing leased (`[-/_=.a-zA-Z0-9]`, JetStream's key characters). */
  key: string;
  /** How long the key outlives its holder's last write: JetStream removes it then (the bucket's max age). */
  ttlMs: number;
  /** Copies JetStream keeps of the bucket (NATS_REPLICAS). */
  replicas: number;
}

/**
 * A short lease: one process at a time holds a key of a key-value bucket
 * whose entries live `ttlMs` past their last write. The holder writes the
 * key again at each hold() by compare-and-set on the revision it wrote last,
 * so a renewal that finds another's write (or the key gone) fails; a holder
 * that stops renewing (killed, frozen, cut from NATS) loses the key when
 * JetStream removes it, about `ttlMs` after its last renewal, and another
 * process's create succeeds from then on.
 *
 * JetStream counts a key's age from the write the server stored, which came
 * after the holder sent it: a renewal sent at `t` and acknowledged holds the
 * lease until `t + ttlMs` at least, by the server's clock. hold() answers
 * true only while more than half of that is left, so a renewal slow to be
 * acknowledged is not trusted.
 */
export class Lease {
  private readonly opened = new OpenedBucket('the lease');
  /** The key's revision this process wrote last; undefined when it holds nothing (or lost it). */
  private revision?: number;
  /** Another process's write this process found at its last try, and whether it had found the same one the try before. */
  private another?: { revision: number; writtenAt: number; again: boolean };
  /** Who holds it, as the key says: this process, one of its kind (pid) among others on the host, once. */
  readonly owner = `${os.hostname()}/${process.pid}/${randomBytes(4).toString('hex')}`;

  constructor(
    readonly config: LeaseConfig,
    private readonly nats: Pick<NatsClient, 'js' | 'jsm'>,
    private readonly now: () => number = Date.now,
  ) {}

  async start(): Promise<void> {
    await this.opened.open(this.nats, this.config.bucket, { history: 1, ttl: this.config.ttlMs, replicas: this.config.replicas });
  }

  stop(): Promise<void> {
    this.opened.close();
    return Promise.resolve();
  }

  /**
   * Takes the lease if no process holds it, or renews it if this one does:
   * true when this process holds it now, for at least half its time to live;
   * false when another does. Throws when NATS does not answer (whether the
   * key is still this process's is then unknown: a later hold() finds out).
   */
  async hold(): Promise<boolean> {
    const sentAt = this.now();
    this.revision = await this.write();
    return this.revision !== undefined && this.now() - sentAt < this.config.ttlMs / 2;
  }

  /** Lets go of the lease, so another process takes it at its next try rather than after the time to live. */
  async release(): Promise<void> {
    const revision = this.revision;
    this.revision = undefined;
    if (revision !== undefined) await this.opened.removeAt(this.config.key, revision);
  }

  /**
   * When to try again, by this process's clock, to take a lease another
   * process holds: just after its key's time to live has passed, once the
   * key was found unchanged at two tries in a row (its holder stopped
   * renewing), and every 25 ms while JetStream has yet to remove it.
   * Undefined while the holder renews: the next pass is soon enough.
   */
  retryAt(now = this.now()): number | undefined {
    if (!this.another?.again) return undefined;
    return Math.max(now + 25, this.another.writtenAt + this.config.ttlMs + 10);
  }

  /** The holder the key names now; undefined when nobody holds the lease. */
  async holder(): Promise<string | undefined> {
    const entry = await this.opened.read(this.config.key);
    return ownerOf(entry?.value);
  }

  /** The key's new revision once written as this process's, or undefined when another process holds it. */
  private async write(): Promise<number | undefined> {
    const { key } = this.config;
    const value = JSON.stringify({ owner: this.owner });
    const seen = this.another;
    if (this.revision !== undefined) {
      const renewed = await this.opened.update(key, value, this.revision);
      if (renewed !== undefined) return renewed;
    }
    const created = await this.opened.create(key, value);
    this.another = undefined;
    if (created !== undefined) return created;
    // The key stands: still this process's when a write of its own was stored but its answer lost (NATS cut meanwhile).
    const entry = await this.opened.read(key);
    if (entry && ownerOf(entry.value) === this.owner) return this.opened.update(key, value, entry.revision);
    if (entry) this.another = { revision: entry.revision, writtenAt: entry.writtenAt, again: entry.revision === seen?.revision };
    return undefined;
  }
}

const ownerOf = (value: unknown): string | undefined => {
  const owner = (value as { owner?: unknown } | undefined)?.owner;
  return typeof owner === 'string' ? owner : undefined;
};
