import { headers as natsHeaders } from 'nats';
import type { NatsClient } from '../../streams/nats-client';
import { readTelemetryHeaders, telemetryHeaderNames } from '../../core/telemetry-headers';
import type { DeadLetterSink, WorkMessage } from './stream-worker-ports';
import { names } from '../../streams/names';

/**
 * Publishes a refused message to the dead-letter stream with its headers and
 * the error that refused it, for an operator to inspect and replay.
 */
export class JetStreamDeadLetters implements DeadLetterSink {
  constructor(
    private readonly nats: NatsClient,
    private readonly prefix: string,
  ) {}

  async deadLetter(m: WorkMessage, err: unknown): Promise<void> {
    const h = natsHeaders();
    for (const [key, values] of m.headers ?? []) for (const v of values) h.append(key, v);
    h.set(telemetryHeaderNames.error, String((err as Error | undefined)?.message ?? err).slice(0, 1000));
    const { kind, org } = readTelemetryHeaders(m.headers);
    await this.nats.js().publish(names(this.prefix).deadLetterSubject(kind || 'unknown', org || 'unknown'), m.data, { headers: h });
  }
}
