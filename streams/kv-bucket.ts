import type { KV } from 'nats';
import { nanos } from 'nats';
import type { NatsClient } from './nats-client';

export interface BucketOptions {
  history: number;
  /** How long a key lives without a write, in ms; unset: forever. */
  ttl?: number;
  replicas: number;
}

/**
 * Opens a key-value bucket, creating it if absent. nats.js creates a bucket
 * with the options given but leaves an existing one as it is, so a changed
 * replica count or time to live is applied here: the bucket follows its
 * configuration at every start, as the streams do (streams/put-stream.ts).
 */
export async function openBucket(nats: Pick<NatsClient, 'js' | 'jsm'>, name: string, opts: BucketOptions): Promise<KV> {
  const kv = await nats.js().views.kv(name, opts);
  const stream = `KV_${name}`;
  const info = await nats.jsm.streams.info(stream);
  const maxAge = opts.ttl ? nanos(opts.ttl) : 0;
  if (info.config.num_replicas !== opts.replicas || info.config.max_age !== maxAge) {
    // JetStream refuses a de-duplication window longer than the messages' age.
    const duplicateWindow = maxAge ? Math.min(info.config.duplicate_window, maxAge) : info.config.duplicate_window;
    await nats.jsm.streams.update(stream, { ...info.config, num_replicas: opts.replicas, max_age: maxAge, duplicate_window: duplicateWindow });
  }
  return kv;
}

/**
 * The bucket a component opens at its start (openBucket) and lets go of at
 * its stop; using it outside that is a programming error, said as such.
 */
export class OpenedBucket {
  private kv?: KV;

  /** `owner`: the component, as the error names it ('the session bucket'). */
  constructor(private readonly owner: string) {}

  async open(nats: Pick<NatsClient, 'js' | 'jsm'>, name: string, opts: BucketOptions): Promise<KV> {
    this.kv = await openBucket(nats, name, opts);
    return this.kv;
  }

  close(): void {
    this.kv = undefined;
  }

  get bucket(): KV {
    if (!this.kv) throw new Error(`${this.owner} is not started`);
    return this.kv;
  }
}
