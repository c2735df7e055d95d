import { randomUUID } from 'node:crypto';
import { ErrorCode, headers as natsHeaders, type MsgHdrs } from 'nats';
import type { JetStreamWriteHealth } from './jetstream-write-health';
import { unavailable } from '../core/errors';
import type { StreamKind } from '../core/telemetry';
import { telemetryHeaderEntries } from '../core/telemetry-headers';
import { counter, engineErrorsCounter, type Registry } from '../observability/metrics';
import { names } from './names';

/** One accepted request's records, already validated and stamped, as JSONEachRow lines. */
export interface TelemetryBatch {
  kind: StreamKind;
  orgId: string;
  batchId: string;
  lines: string[];
  /**
   * A flow batch's detection digest, a line for each of `lines` in the same
   * order (core/flow.ts flowDigestLine): it travels after the rows, and the
   * writers copy it alone to the rate detectors.
   */
  digests?: string[];
  minTs: number;
  maxTs: number;
  /**
   * Its event ids come from the client's Idempotency-Key, so a retry repeats
   * them: such a batch is never coalesced, and its message is marked for the
   * workers to check its rows against ClickHouse before writing them.
   */
  idempotent?: boolean;
  /** The exporter a collected batch came from: it is part of the subject (see topology). */
  exporter?: string;
}

/** The part of the NATS client the publisher uses (NatsClient has it); unit tests hand in a plain object. */
export interface PublishConnection {
  readonly isConnected: boolean;
  readonly nc: { readonly info?: { readonly max_payload: number } };
  js(): {
    publish(subject: string, data: Uint8Array, opts: { msgID: string; headers: MsgHdrs; timeout: number }): Promise<{ duplicate: boolean }>;
  };
}

interface PendingGroup {
  kind: StreamKind;
  orgId: string;
  lines: string[];
  /** Undefined once a request without digests joined: the group's message is then rows only. */
  digests?: string[];
  bytes: number;
  minTs: number;
  maxTs: number;
  waiters: Array<{ resolve: () => void; reject: (err: unknown) => void }>;
}

const publisherMetrics = (registry: Registry) => ({
  accepted: counter(registry, {
    name: 'nettel_telemetry_accepted_total',
    help: 'Telemetry records stored by JetStream for the first time, by kind',
    labelNames: ['kind'] as const,
  }),
  duplicates: counter(registry, {
    name: 'nettel_telemetry_duplicate_records_total',
    help: 'Telemetry records JetStream already held (retries within its duplicate window), by kind',
    labelNames: ['kind'] as const,
  }),
  engineErrors: engineErrorsCounter(registry),
});

/** Small requests are coalesced up to this many records per message. */
const groupMaxLines = 2_000;
/** Requests with more records than this are published on their own. */
const coalesceMaxLines = 200;

/**
 * Publishes a batch to JetStream and resolves once JetStream acknowledged
 * it. A batch that fits the server's payload limit travels as one message,
 * so it is stored whole or not at all; `Nats-Msg-Id` is the batch id, so a
 * client retry with the same Idempotency-Key is stored once.
 *
 * Group commit: small requests of one org and kind that arrive in the same
 * turn of the event loop share one message. Each is still answered only
 * after JetStream acknowledged that message, so the guarantee is unchanged,
 * and one acknowledgement serves many requests.
 */
export class TelemetryPublisher {
  private readonly pending = new Map<string, PendingGroup>();
  private flushScheduled = false;

  private readonly metrics;

  constructor(
    private readonly deps: {
      nats: PublishConnection;
      prefix: string;
      registry: Registry;
      timeoutMs?: number;
      /** Told whether each publish was stored or timed out (the embedded nats-server's liveness reads it). */
      writes?: Pick<JetStreamWriteHealth, 'stored' | 'timedOut'>;
    },
  ) {
    this.metrics = publisherMetrics(deps.registry);
  }

  /**
   * `coalesce: false` keeps the request's own message id (Idempotency-Key);
   * otherwise a small request may share a message with others. An
   * idempotent batch is never coalesced.
   */
  publish(batch: TelemetryBatch, opts: { coalesce: boolean } = { coalesce: true }): Promise<void> {
    if (!opts.coalesce || batch.idempotent || batch.lines.length > coalesceMaxLines) return this.publishNow(batch);
    const subject = names(this.deps.prefix).subject(batch.kind, batch.orgId);
    const bytes = linesBytes(batch.lines) + (batch.digests ? linesBytes(batch.digests) : 0);
    // A group is always one message: a request that would take it past the payload limit starts the next one.
    if ((this.pending.get(subject)?.bytes ?? 0) + bytes > this.maxMessageBytes()) this.flushGroup(subject);
    let group = this.pending.get(subject);
    if (!group) {
      group = { kind: batch.kind, orgId: batch.orgId, lines: [], digests: [], bytes: 0, minTs: batch.minTs, maxTs: batch.maxTs, waiters: [] };
      this.pending.set(subject, group);
    }
    for (const line of batch.lines) group.lines.push(line);
    if (group.digests && batch.digests) for (const line of batch.digests) group.digests.push(line);
    else group.digests = undefined;
    group.bytes += bytes;
    group.minTs = Math.min(group.minTs, batch.minTs);
    group.maxTs = Math.max(group.maxTs, batch.maxTs);
    const done = new Promise<void>((resolve, reject) => group.waiters.push({ resolve, reject }));
    if (group.lines.length >= groupMaxLines) this.flushGroup(subject);
    else if (!this.flushScheduled) {
      this.flushScheduled = true;
      setImmediate(() => this.flushAll());
    }
    return done;
  }

  private flushAll(): void {
    this.flushScheduled = false;
    for (const subject of [...this.pending.keys()]) this.flushGroup(subject);
  }

  private flushGroup(subject: string): void {
    const group = this.pending.get(subject);
    if (!group) return;
    this.pending.delete(subject);
    const batchId = `${group.orgId}.${group.kind}.g${randomUUID().replace(/-/g, '').slice(0, 16)}`;
    this.publishNow({ kind: group.kind, orgId: group.orgId, batchId, lines: group.lines, digests: group.digests, minTs: group.minTs, maxTs: group.maxTs }).then(
      () => group.waiters.forEach((w) => w.resolve()),
      (err) => group.waiters.forEach((w) => w.reject(err)),
    );
  }

  private maxMessageBytes(): number {
    return maxTelemetryMessageBytes(this.deps.nats.nc);
  }

  private async publishNow(batch: TelemetryBatch): Promise<void> {
    // While reconnecting, a publish would wait in this process's buffer and
    // might land after the client was told 503: refuse it at once instead.
    if (!this.deps.nats.isConnected) {
      this.metrics.engineErrors.inc({ engine: 'nats', operation: 'publish' });
      throw unavailable('telemetry log (NATS JetStream)');
    }
    const subject = names(this.deps.prefix).subject(batch.kind, batch.orgId, batch.exporter);
    const chunks = chunkLines(batch.lines, batch.digests, this.maxMessageBytes());
    const js = this.deps.nats.js();
    let acks;
    try {
      acks = await Promise.all(
        chunks.map((chunk, i) => {
          const h = natsHeaders();
          // JetStream drops a retry only within its duplicate window: past it, the workers check the rows (idempotent).
          for (const [name, value] of telemetryHeaderEntries({ ...batch, count: chunk.count, rowsBytes: chunk.rowsBytes })) h.set(name, value);
          const msgID = chunks.length === 1 ? batch.batchId : `${batch.batchId}.${i}`;
          return js.publish(subject, chunk.data, { msgID, headers: h, timeout: this.deps.timeoutMs ?? 5_000 });
        }),
      );
    } catch (err) {
      this.metrics.engineErrors.inc({ engine: 'nats', operation: 'publish' });
      if ((err as { code?: string }).code === ErrorCode.Timeout) this.deps.writes?.timedOut();
      throw unavailable('telemetry log (NATS JetStream)', err);
    }
    this.deps.writes?.stored();
    // A message JetStream already held (a client's retry within its duplicate window) is not accepted twice.
    acks.forEach((ack, i) => {
      const count = chunks[i]!.count;
      if (ack.duplicate) this.metrics.duplicates.inc({ kind: batch.kind }, count);
      else this.metrics.accepted.inc({ kind: batch.kind }, count);
    });
  }
}

const linesBytes = (lines: string[]): number => lines.reduce((n, line) => n + Buffer.byteLength(line) + 1, 0);

interface Chunk {
  data: Buffer;
  count: number;
  /** Where the rows end when the digest follows them. */
  rowsBytes?: number;
}

/** The lines as messages within the payload limit, each line's digest (when given) in the same message after the rows. */
function chunkLines(lines: string[], digests: string[] | undefined, maxBytes: number): Chunk[] {
  const chunks: Chunk[] = [];
  let from = 0;
  let size = 0;
  const flush = (to: number) => {
    if (to === from) return;
    const rows = lines.slice(from, to).join('\n') + '\n';
    if (!digests) chunks.push({ data: Buffer.from(rows), count: to - from });
    else {
      const rowsBytes = Buffer.byteLength(rows);
      chunks.push({ data: Buffer.from(rows + digests.slice(from, to).join('\n') + '\n'), count: to - from, rowsBytes });
    }
    from = to;
    size = 0;
  };
  for (let i = 0; i < lines.length; i += 1) {
    const bytes = Buffer.byteLength(lines[i]!) + 1 + (digests ? Buffer.byteLength(digests[i]!) + 1 : 0);
    if (size + bytes > maxBytes) flush(i);
    size += bytes;
  }
  flush(lines.length);
  return chunks;
}

/** The largest data of a telemetry message (and so of its detection copy): the server's payload limit, less room for headers. */
export const maxTelemetryMessageBytes = (nc: { readonly info?: { readonly max_payload: number } }): number => (nc.info?.max_payload ?? 1024 * 1024) - 4096;
