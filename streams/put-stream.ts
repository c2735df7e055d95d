import type { JetStreamManager, StreamConfig } from 'nats';

/** JetStream API error codes (err_code) the adapters branch on. */
export const jsErrors = { streamNotFound: 10059, consumerNotFound: 10014 } as const;
export const apiErrorCode = (err: unknown) => (err as { api_error?: { err_code?: number } }).api_error?.err_code;

/** Creates a stream, or brings an existing one to this configuration (idempotent at every start). */
export async function putStream(jsm: JetStreamManager, stream: Partial<StreamConfig> & { name: string }): Promise<void> {
  const existing = await jsm.streams.info(stream.name).catch((err: unknown) => {
    if (apiErrorCode(err) === jsErrors.streamNotFound) return undefined;
    throw err;
  });
  if (existing) await jsm.streams.update(stream.name, stream);
  else await jsm.streams.add(stream);
}
