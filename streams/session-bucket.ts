import type { KV } from 'nats';
import { OpenedBucket } from './kv-bucket';
import type { NatsClient } from './nats-client';
import { apiErrorCode, names } from './names';

/** JetStream's "wrong last sequence": another process wrote the entry first. */
const wrongLastSequence = 10071;

/** An entry as read: its value (unparsed: input from outside the process) and the revision a compare-and-set names. */
export interface StoredEntry {
  value: unknown;
  revision: number;
}

/** Where sessions live (SessionBucket); unit tests hand in a Map. */
export interface SessionStore {
  read(key: string): Promise<StoredEntry | undefined>;
  /** Writes a new entry; false when one exists. */
  create(key: string, value: object): Promise<boolean>;
  /** Writes over the entry if it is still at `revision`: its new revision, or undefined when another write (or a deletion) came first. */
  update(key: string, value: object, revision: number): Promise<number | undefined>;
  remove(key: string): Promise<void>;
}

const isConflict = (err: unknown) => apiErrorCode(err) === wrongLastSequence;

/**
 * The console's sessions in a JetStream key-value bucket (`<PREFIX>_SESSIONS`,
 * replicated as the streams are), so every API process behind a load balancer
 * reads the same ones and a logout anywhere ends the session everywhere.
 * The bucket's time to live is the sessions' absolute time-out: an entry
 * nobody writes again is dropped by JetStream once no session could use it.
 */
export class SessionBucket implements SessionStore {
  private readonly opened = new OpenedBucket('the session bucket');

  constructor(private readonly deps: { nats: NatsClient; prefix: string; replicas: number; ttlMs: number }) {}

  async start(): Promise<void> {
    await this.opened.open(this.deps.nats, names(this.deps.prefix).sessionsBucket, { history: 1, ttl: this.deps.ttlMs, replicas: this.deps.replicas });
  }

  stop(): Promise<void> {
    this.opened.close();
    return Promise.resolve();
  }

  private get bucket(): KV {
    return this.opened.bucket;
  }

  async read(key: string): Promise<StoredEntry | undefined> {
    const entry = await this.bucket.get(key);
    if (!entry || entry.operation !== 'PUT') return undefined;
    let value: unknown;
    try {
      value = entry.json<unknown>();
    } catch {
      value = undefined;
    }
    return { value, revision: entry.revision };
  }

  async create(key: string, value: object): Promise<boolean> {
    try {
      await this.bucket.create(key, JSON.stringify(value));
      return true;
    } catch (err) {
      if (isConflict(err)) return false;
      throw err;
    }
  }

  async update(key: string, value: object, revision: number): Promise<number | undefined> {
    try {
      return await this.bucket.update(key, JSON.stringify(value), revision);
    } catch (err) {
      if (isConflict(err)) return undefined;
      throw err;
    }
  }

  async remove(key: string): Promise<void> {
    await this.bucket.delete(key);
  }
}
