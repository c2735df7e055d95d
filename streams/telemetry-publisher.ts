import { headers as natsHeaders } from 'nats';
import { unavailable } from '../core/errors';
import type { Metrics } from '../service/metrics';
import type { NatsClient } from './nats-client';
import { names, type TelemetrySubjectKind } from './topology';

/** One accepted request's records, already validated and stamped, as JSONEachRow lines. */
export interface TelemetryBatch {
  kind: TelemetrySubjectKind;
  orgId: string;
  batchId: string;
  lines: string[];
  minTs: number;
  maxTs: number;
}

export const headerNames = {
  kind: 'Nettel-Kind',
  org: 'Nettel-Org',
  count: 'Nettel-Count',
  minTs: 'Nettel-Min-Ts',
  maxTs: 'Nettel-Max-Ts',
} as const;

/**
 * Publishes a batch to JetStream and resolves once JetStream acknowledged
 * it. A batch that fits the server's payload limit travels as one message,
 * so it is stored whole or not at all; `Nats-Msg-Id` is the batch id, so a
 * client retry with the same Idempotency-Key is stored once.
 */
export class TelemetryPublisher {
  constructor(
    private readonly deps: { nats: NatsClient; prefix: string; metrics: Metrics; timeoutMs?: number },
  ) {}

  async publish(batch: TelemetryBatch): Promise<void> {
    // While reconnecting, a publish would wait in this process's buffer and
    // might land after the client was told 503: refuse it at once instead.
    if (!this.deps.nats.isConnected) {
      this.deps.metrics.engineErrors.inc({ engine: 'nats', operation: 'publish' });
      throw unavailable('telemetry log (NATS JetStream)');
    }
    const subject = names(this.deps.prefix).subject(batch.kind, batch.orgId);
    const maxPayload = (this.deps.nats.nc.info?.max_payload ?? 1024 * 1024) - 4096;
    const chunks = chunkLines(batch.lines, maxPayload);
    const js = this.deps.nats.js();
    try {
      await Promise.all(
        chunks.map((chunk, i) => {
          const h = natsHeaders();
          h.set(headerNames.kind, batch.kind);
          h.set(headerNames.org, batch.orgId);
          h.set(headerNames.count, String(chunk.count));
          h.set(headerNames.minTs, String(batch.minTs));
          h.set(headerNames.maxTs, String(batch.maxTs));
          const msgID = chunks.length === 1 ? batch.batchId : `${batch.batchId}.${i}`;
          return js.publish(subject, chunk.data, { msgID, headers: h, timeout: this.deps.timeoutMs ?? 5_000 });
        }),
      );
    } catch (err) {
      this.deps.metrics.engineErrors.inc({ engine: 'nats', operation: 'publish' });
      throw unavailable('telemetry log (NATS JetStream)', err);
    }
    this.deps.metrics.telemetryAccepted.inc({ kind: batch.kind }, batch.lines.length);
  }
}

function chunkLines(lines: string[], maxBytes: number): Array<{ data: Buffer; count: number }> {
  const chunks: Array<{ data: Buffer; count: number }> = [];
  let current: string[] = [];
  let size = 0;
  const flush = () => {
    if (current.length) chunks.push({ data: Buffer.from(current.join('\n') + '\n'), count: current.length });
    current = [];
    size = 0;
  };
  for (const line of lines) {
    const bytes = Buffer.byteLength(line) + 1;
    if (size + bytes > maxBytes) flush();
    current.push(line);
    size += bytes;
  }
  flush();
  return chunks;
}
