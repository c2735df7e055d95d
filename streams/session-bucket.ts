import { OpenedBucket, type StoredEntry } from './kv-bucket';
import type { NatsClient } from './nats-client';

export type { StoredEntry } from './kv-bucket';

/** Where sessions (or sign-ins under way) live (SessionBucket); unit tests hand in a Map. */
export interface SessionStore {
  read(key: string): Promise<StoredEntry | undefined>;
  /** Writes a new entry; false when one exists. */
  create(key: string, value: object): Promise<boolean>;
  /** Writes over the entry if it is still at `revision`: its new revision, or undefined when another write (or a deletion) came first. */
  update(key: string, value: object, revision: number): Promise<number | undefined>;
  /** Deletes the entry if it is still at `revision`: false when another write or deletion came first (the entry was taken). */
  removeAt(key: string, revision: number): Promise<boolean>;
  remove(key: string): Promise<void>;
}

export interface SessionBucketConfig {
  nats: NatsClient;
  /** The bucket: `<PREFIX>_SESSIONS` (the sessions) or `<PREFIX>_SIGN_INS` (sign-ins under way). */
  name: string;
  replicas: number;
  /** The entries' time to live: the sessions' absolute time-out, or the time a sign-in may take. */
  ttlMs: number;
  /** The most the bucket holds; a new entry past it is refused (unset: no bound). */
  maxBytes?: number;
}

/**
 * The console's sessions (or its sign-ins under way) in a JetStream key-value
 * bucket, replicated as the streams are, so every API process behind a load
 * balancer reads the same ones and a logout anywhere ends the session
 * everywhere. The bucket's time to live is the longest an entry can be used:
 * an entry nobody writes again is dropped by JetStream once nobody could use it.
 */
export class SessionBucket implements SessionStore {
  private readonly opened;

  constructor(private readonly config: SessionBucketConfig) {
    this.opened = new OpenedBucket(`the bucket ${config.name}`);
  }

  async start(): Promise<void> {
    const { nats, name, ttlMs, replicas, maxBytes } = this.config;
    await this.opened.open(nats, name, { history: 1, ttl: ttlMs, replicas, maxBytes });
  }

  stop(): Promise<void> {
    this.opened.close();
    return Promise.resolve();
  }

  read(key: string): Promise<StoredEntry | undefined> {
    return this.opened.read(key);
  }

  async create(key: string, value: object): Promise<boolean> {
    return (await this.opened.create(key, JSON.stringify(value))) !== undefined;
  }

  update(key: string, value: object, revision: number): Promise<number | undefined> {
    return this.opened.update(key, JSON.stringify(value), revision);
  }

  removeAt(key: string, revision: number): Promise<boolean> {
    return this.opened.removeAt(key, revision);
  }

  remove(key: string): Promise<void> {
    return this.opened.remove(key);
  }
}
