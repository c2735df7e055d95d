import type { KV } from 'nats';
import { nanos } from 'nats';
import type { NatsClient } from './nats-client';
import { apiErrorCode, jsErrors } from './names';

export interface BucketOptions {
  history: number;
  /** How long a key lives without a write, in ms; unset: forever. */
  ttl?: number;
  /** The most the bucket may hold, in bytes; a write past it is refused (JetStream discards new messages for buckets); unset: no bound. */
  maxBytes?: number;
  replicas: number;
}

/** An entry as read: its value (unparsed: input from outside the process) and the revision a compare-and-set names. */
export interface StoredEntry {
  value: unknown;
  revision: number;
  /** When JetStream stored it, by the server's clock (ms): a bucket's time to live counts from it. */
  writtenAt: number;
}

/**
 * JetStream's "wrong last sequence": a compare-and-set lost to another writer (or a create found the key), or, on
 * a cluster's replicated bucket, came while another write of the key was still in flight.
 */
export const isWrongLastSequence = (err: unknown): boolean => {
  const code = apiErrorCode(err);
  return code === jsErrors.wrongLastSequence || code === jsErrors.wrongLastSequenceInFlight;
};

/** A bucket at its bound refused a new entry (JetStream 10077, "maximum bytes exceeded"). */
export class BucketFull extends Error {
  constructor(bucket: string, options?: ErrorOptions) {
    super(`the bucket ${bucket} is full`, options);
    this.name = 'BucketFull';
  }
}

/**
 * Opens a key-value bucket, creating it if absent. nats.js creates a bucket
 * with the options given but leaves an existing one as it is, so a changed
 * replica count, time to live or size bound is applied here: the bucket
 * follows its configuration at every start, as the streams do (streams/put-stream.ts).
 */
export async function openBucket(nats: Pick<NatsClient, 'js' | 'jsm'>, name: string, opts: BucketOptions): Promise<KV> {
  const kv = await nats.js().views.kv(name, { history: opts.history, ttl: opts.ttl, replicas: opts.replicas, ...(opts.maxBytes ? { max_bytes: opts.maxBytes } : {}) });
  const stream = `KV_${name}`;
  const info = await nats.jsm.streams.info(stream);
  const maxAge = opts.ttl ? nanos(opts.ttl) : 0;
  const maxBytes = opts.maxBytes ?? -1;
  if (info.config.num_replicas !== opts.replicas || info.config.max_age !== maxAge || info.config.max_bytes !== maxBytes) {
    // JetStream refuses a de-duplication window longer than the messages' age.
    const duplicateWindow = maxAge ? Math.min(info.config.duplicate_window, maxAge) : info.config.duplicate_window;
    await nats.jsm.streams.update(stream, { ...info.config, num_replicas: opts.replicas, max_age: maxAge, max_bytes: maxBytes, duplicate_window: duplicateWindow });
  }
  return kv;
}

/**
 * The bucket a component opens at its start (openBucket) and lets go of at
 * its stop; using it outside that is a programming error, said as such. Its
 * reads and compare-and-set writes are the one shape every bucket of the
 * service uses (the sessions, the audit heads, the locks, the query budget).
 */
export class OpenedBucket {
  private kv?: KV;
  private name = '';

  /** `owner`: the component, as the error names it ('the session bucket'). */
  constructor(private readonly owner: string) {}

  async open(nats: Pick<NatsClient, 'js' | 'jsm'>, name: string, opts: BucketOptions): Promise<KV> {
    this.kv = await openBucket(nats, name, opts);
    this.name = name;
    return this.kv;
  }

  close(): void {
    this.kv = undefined;
  }

  get bucket(): KV {
    if (!this.kv) throw new Error(`${this.owner} is not started`);
    return this.kv;
  }

  /** The entry at `key`, its value parsed as JSON (undefined when it does not parse); undefined when absent or deleted. */
  async read(key: string): Promise<StoredEntry | undefined> {
    const entry = await this.bucket.get(key);
    if (!entry || entry.operation !== 'PUT') return undefined;
    let value: unknown;
    try {
      value = entry.json<unknown>();
    } catch {
      value = undefined;
    }
    return { value, revision: entry.revision, writtenAt: entry.created.getTime() };
  }

  /** Writes a new entry: its revision, or undefined when the key holds one; BucketFull past the bucket's bound. */
  async create(key: string, value: string): Promise<number | undefined> {
    try {
      return await lostToAnother(this.bucket.create(key, value));
    } catch (err) {
      // A bucket's stream discards new messages: a store failure on a create is the bucket at one of its bounds.
      if (apiErrorCode(err) === jsErrors.storeFailed) throw new BucketFull(this.name, { cause: err });
      throw err;
    }
  }

  /** Writes over the entry if it is still at `revision`: its new revision, or undefined when another write (or a deletion) came first. */
  update(key: string, value: string, revision: number): Promise<number | undefined> {
    return lostToAnother(this.bucket.update(key, value, revision));
  }

  /** Deletes the entry if it is still at `revision`: false when another write (or deletion) came first. */
  async removeAt(key: string, revision: number): Promise<boolean> {
    return (await lostToAnother(this.bucket.delete(key, { previousSeq: revision }).then(() => revision))) !== undefined;
  }

  async remove(key: string): Promise<void> {
    await this.bucket.delete(key);
  }
}

/** What a compare-and-set write returns, or undefined when it lost to another writer; any other error is thrown. */
async function lostToAnother<T>(write: Promise<T>): Promise<T | undefined> {
  try {
    return await write;
  } catch (err) {
    if (isWrongLastSequence(err)) return undefined;
    throw err;
  }
}
