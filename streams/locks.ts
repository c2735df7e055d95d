import type { KV } from 'nats';
import type { Logger } from '../observability/logger';
import { OpenedBucket } from './kv-bucket';
import type { NatsClient } from './nats-client';
import { names } from './names';

/**
 * Named locks across processes, in a JetStream key-value bucket: a lock is a
 * key created only if absent. Its holder rewrites it while the work runs; a
 * holder that dies leaves a key that expires after `ttlMs`, so the next
 * process takes over. Within one process the waiters of a name queue in the
 * order they asked and only the first of them tries the key: each takes it as
 * soon as the one before released it, instead of at its next try (every
 * `retryMs`, in no order), which made a burst of automation runs of one
 * workspace wait in a row for tens of seconds (bench, 2026-11-30).
 */
export interface LockConfig {
  prefix: string;
  ttlMs: number;
  /** How often a waiting process tries again. */
  retryMs: number;
  /** Copies JetStream keeps of the bucket (NATS_REPLICAS). */
  replicas: number;
}

export const defaultLockConfig = (prefix: string): LockConfig => ({ prefix, ttlMs: 60_000, retryMs: 250, replicas: 1 });

export class Locks {
  private readonly opened = new OpenedBucket('locks');
  /** Per name, the end of the last waiter's turn in this process. */
  private readonly turns = new Map<string, Promise<void>>();

  constructor(
    private readonly config: LockConfig,
    private readonly nats: NatsClient,
    private readonly log: Logger,
  ) {}

  async start(): Promise<void> {
    await this.opened.open(this.nats, names(this.config.prefix).locksBucket, { history: 1, ttl: this.config.ttlMs, replicas: this.config.replicas });
  }

  stop(): Promise<void> {
    this.opened.close();
    return Promise.resolve();
  }

  /** Runs `work` while holding the lock `name`, waiting for another holder to finish first. */
  withLock<T>(name: string, work: () => Promise<T>): Promise<T> {
    return this.inTurn(name, async () => {
      const kv = this.bucket;
      const owner = `${process.pid}-${Date.now()}`;
      return this.hold(kv, name, owner, await this.acquire(name, owner), work);
    });
  }

  /** Runs `work` once every earlier call of this process for `name` has ended. */
  private inTurn<T>(name: string, work: () => Promise<T>): Promise<T> {
    const mine = (this.turns.get(name) ?? Promise.resolve()).then(work);
    const ended = mine.then(
      () => undefined,
      () => undefined,
    );
    this.turns.set(name, ended);
    void ended.then(() => {
      if (this.turns.get(name) === ended) this.turns.delete(name);
    });
    return mine;
  }

  /** Runs `work` holding the lock `name` if no other process holds it; otherwise does nothing and returns undefined. */
  async tryWithLock<T>(name: string, work: () => Promise<T>): Promise<T | undefined> {
    const kv = this.bucket;
    const owner = `${process.pid}-${Date.now()}`;
    const revision = await this.tryAcquire(name, owner);
    return revision === undefined ? undefined : this.hold(kv, name, owner, revision, work);
  }

  private async hold<T>(kv: KV, name: string, owner: string, acquired: number, work: () => Promise<T>): Promise<T> {
    let revision = acquired;
    const refresh = setInterval(() => {
      kv.update(name, owner, revision).then(
        (r) => (revision = r),
        // The work goes on; if the key expired meanwhile another process may take the lock, and the log says so.
        (err: unknown) => this.log.warn({ err, lock: name }, 'unable to refresh a lock'),
      );
    }, Math.max(1000, Math.floor(this.config.ttlMs / 3)));
    try {
      return await work();
    } finally {
      clearInterval(refresh);
      // A lock not released expires after its TTL: the next process waits that long at most.
      await kv.delete(name, { previousSeq: revision }).catch((err: unknown) => this.log.warn({ err, lock: name }, 'unable to release a lock'));
    }
  }

  /** The lock's revision once taken, or undefined while another process holds it (the key exists). */
  private tryAcquire(name: string, owner: string): Promise<number | undefined> {
    return this.opened.create(name, owner);
  }

  private async acquire(name: string, owner: string): Promise<number> {
    for (;;) {
      const revision = await this.tryAcquire(name, owner);
      if (revision !== undefined) return revision;
      await new Promise((resolve) => setTimeout(resolve, this.config.retryMs));
    }
  }

  private get bucket(): KV {
    return this.opened.bucket;
  }
}
