import type { JetStreamManager, StreamConfig } from 'nats';

/** JetStream API error codes (err_code) the adapters branch on. */
export const jsErrors = { streamNotFound: 10059, consumerNotFound: 10014, insufficientStorage: 10047 } as const;
export const apiErrorCode = (err: unknown) => (err as { api_error?: { err_code?: number } }).api_error?.err_code;

/** Creates a stream, or brings an existing one to this configuration (idempotent at every start). */
export async function putStream(jsm: JetStreamManager, stream: Partial<StreamConfig> & { name: string }): Promise<void> {
  const existing = await jsm.streams.info(stream.name).catch((err: unknown) => {
    if (apiErrorCode(err) === jsErrors.streamNotFound) return undefined;
    throw err;
  });
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
        '(NATS_STREAM_MAX_BYTES, NATS_DEAD_LETTER_MAX_BYTES and the outbox), with NATS_REPLICAS copies on a cluster',
      { cause },
    );
    this.name = 'StoreTooSmallError';
  }
}
