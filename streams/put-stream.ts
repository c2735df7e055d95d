import { isDeepStrictEqual } from 'node:util';
import type { ConsumerConfig, JetStreamManager, StreamConfig } from 'nats';
import { apiErrorCode, jsErrors } from './names';


/**
 * Whether the server's configuration already holds every setting asked for.
 * A start that changes nothing sends nothing: a role whose NATS user may
 * read the topology but not change it (deploy/nats/nettel.conf) starts on a
 * topology an admin made.
 */
export function holdsSettings(existing: object, wanted: object): boolean {
  const has = existing as Record<string, unknown>;
  return Object.entries(wanted).every(([key, value]) => value === undefined || isDeepStrictEqual(has[key], value));
}

/** Creates a stream, or brings an existing one to this configuration (idempotent at every start). */
export async function putStream(jsm: JetStreamManager, stream: Partial<StreamConfig> & { name: string }): Promise<void> {
  const existing = await jsm.streams.info(stream.name).catch((err: unknown) => {
    if (apiErrorCode(err) === jsErrors.streamNotFound) return undefined;
    throw err;
  });
  if (existing && holdsSettings(existing.config, stream)) return;
  try {
    if (existing) await jsm.streams.update(stream.name, stream);
    else await jsm.streams.add(stream);
  } catch (err) {
    if (apiErrorCode(err) !== jsErrors.insufficientStorage) throw err;
    // JetStream reserves each stream's byte limit up front; its own message names neither the stream nor the setting.
    throw new StoreTooSmallError(stream.name, stream.max_bytes, err);
  }
}

/** The server's store bound cannot hold what the streams reserve: a deployment error, reported at start. */
export class StoreTooSmallError extends Error {
  constructor(streamName: string, maxBytes: number | undefined, cause: unknown) {
    super(
      `nats-server has no room to reserve ${maxBytes ?? 'the'} bytes for stream ${streamName}: its store bound ` +
        '(max_file_store; EMBEDDED_NATS_MAX_FILE_STORE for the embedded server) must hold the byte limits of every stream ' +
        '(NATS_STREAM_MAX_BYTES, NATS_DEAD_LETTER_MAX_BYTES, the outbox and the rate detectors feed), with NATS_REPLICAS copies on a cluster',
      { cause },
    );
    this.name = 'StoreTooSmallError';
  }
}

/** Creates a durable consumer, or brings it to this configuration; true when it had to be created. */
export async function putConsumer(jsm: JetStreamManager, stream: string, consumer: Partial<ConsumerConfig> & { durable_name: string }): Promise<boolean> {
  const existing = await jsm.consumers.info(stream, consumer.durable_name).catch((err: unknown) => {
    if (apiErrorCode(err) === jsErrors.consumerNotFound) return undefined;
    throw err;
  });
  if (existing && holdsSettings(existing.config, consumer)) return false;
  if (existing) await jsm.consumers.update(stream, consumer.durable_name, consumer);
  else await jsm.consumers.add(stream, consumer);
  return !existing;
}
