import { AckPolicy, DiscardPolicy, RetentionPolicy, StorageType, headers as natsHeaders, nanos, type ConsumerConfig, type JetStreamManager, type MsgHdrs, type StreamConfig } from 'nats';
import { digestOf, rowsOf, telemetryHeaderNames } from '../core/telemetry-headers';
import { counter, type Registry } from '../observability/metrics';
import { names } from './names';
import type { NatsClient } from './nats-client';
import { putConsumer, putStream } from './put-stream';

/**
 * The rate detectors' feed. The telemetry stream has work-queue retention,
 * whose consumers may not overlap (nats-server refuses a second consumer on
 * the flow subjects: "filtered consumer not unique on workqueue stream") and
 * whose messages leave once the writers acknowledge them; its retention
 * cannot be changed in place either. So the stream workers, once a batch of
 * flows is written and before they acknowledge it, publish a copy of each
 * flow message here, and one detector at a time reads them
 * (workers/detection/): the detectors judge exactly the stored flows, as a
 * replay does. The copy is the message's detection digest (the fields the
 * detectors read, core/flow.ts flowDigestLine, about a seventh of the
 * rows' bytes), marked by its `Nettel-Digest` header; a message published by
 * an earlier release has none, and its rows are copied instead.
 *
 * - Stream `<PREFIX>_DETECTION` takes `<prefix>.detect.flow.<org>`,
 *   work-queue retention, one durable consumer `<PREFIX>_DETECTOR`.
 * - `Nats-Msg-Id` is the telemetry message's stream sequence: a writer that
 *   crashed between the copy and its ack copies it again on redelivery, and
 *   JetStream keeps one (within the duplicate window).
 * - `discard: old` with an age and byte limit: when the detector is away the
 *   feed drops its oldest copies (flows that old would be late anyway) and
 *   never refuses a copy, so detection never holds the write path back.
 */
export interface DetectionFeedConfig {
  prefix: string;
  maxBytes: number;
  maxAgeMs: number;
  duplicateWindowMs: number;
  replicas: number;
}

export const defaultDetectionFeedConfig = (prefix: string): DetectionFeedConfig => ({
  prefix,
  maxBytes: 1024 ** 3,
  maxAgeMs: 15 * 60_000,
  duplicateWindowMs: 120_000,
  replicas: 1,
});

export function detectionStream(config: DetectionFeedConfig): Partial<StreamConfig> & { name: string } {
  const n = names(config.prefix);
  return {
    name: n.detection,
    subjects: [n.detectionSubjects],
    retention: RetentionPolicy.Workqueue,
    storage: StorageType.File,
    discard: DiscardPolicy.Old,
    max_bytes: config.maxBytes,
    max_age: nanos(config.maxAgeMs),
    duplicate_window: nanos(config.duplicateWindowMs),
    num_replicas: config.replicas,
  };
}

/** The detector's durable consumer: `maxAckPending` bounds the copies it holds while their windows are open. */
export const detectorConsumer = (prefix: string, ackWaitMs: number, maxAckPending: number): Partial<ConsumerConfig> & { durable_name: string } => ({
  durable_name: names(prefix).detector,
  ack_policy: AckPolicy.Explicit,
  ack_wait: nanos(ackWaitMs),
  max_deliver: -1,
  max_ack_pending: maxAckPending,
});

/** Messages the detector holds at most while their windows are open (bounds the feed's memory in the holder). */
export const detectorMaxAckPending = 20_000;

/** The feed's stream and the detector's consumer, as the topology job (and every start) makes them. */
export async function ensureDetectionFeed(jsm: JetStreamManager, config: DetectionFeedConfig, ackWaitMs: number): Promise<void> {
  await putStream(jsm, detectionStream(config));
  await ensureDetectorConsumer(jsm, config.prefix, ackWaitMs, detectorMaxAckPending);
}

/** A written flow message, as the copy needs it (a JetStream message of the telemetry stream). */
export interface WrittenFlowMessage {
  readonly data: Uint8Array;
  readonly headers?: Iterable<[string, string[]]> & { get(key: string): string };
  readonly info: { readonly streamSequence: number };
}

/**
 * A copy JetStream did not take. The stream workers retry the batch (its
 * rows are found stored) for as long as it lasts, as for a transient write
 * failure (core/write-failure.ts): a written message is never dead-lettered
 * for its copy.
 */
export class DetectionFeedError extends Error {
  constructor(cause: unknown) {
    super(`unable to copy written flows to the rate detectors: ${String((cause as Error | undefined)?.message ?? cause)}`, { cause });
    this.name = 'DetectionFeedError';
  }
}

/** Publishes the copies of written flow messages, and resolves once JetStream holds each. */
export class DetectionFeed {
  private readonly copied;

  constructor(private readonly deps: { nats: Pick<NatsClient, 'js' | 'isConnected'>; prefix: string; registry: Registry; timeoutMs?: number }) {
    this.copied = counter(deps.registry, { name: 'nettel_detection_feed_copies_total', help: 'Flow messages copied to the rate detectors, by outcome', labelNames: ['outcome'] as const });
  }

  async copy(messages: ReadonlyArray<{ orgId: string; message: WrittenFlowMessage }>): Promise<void> {
    if (messages.length === 0) return;
    // While reconnecting, a publish would wait out its timeout for each message of a batch retried one by one,
    // holding the writers back long after the server is back: refuse at once, as the telemetry publisher does.
    if (!this.deps.nats.isConnected) {
      this.copied.inc({ outcome: 'failed' }, messages.length);
      throw new DetectionFeedError(new Error('not connected to NATS'));
    }
    const js = this.deps.nats.js();
    const n = names(this.deps.prefix);
    const acks = await Promise.all(
      messages.map(async ({ orgId, message }) => {
        const { data, headers: h } = copyOf(message);
        try {
          return await js.publish(n.detectionSubject(orgId), data, { msgID: `tel-${message.info.streamSequence}`, headers: h, timeout: this.deps.timeoutMs ?? 5_000 });
        } catch (err) {
          this.copied.inc({ outcome: 'failed' });
          throw new DetectionFeedError(err);
        }
      }),
    );
    for (const ack of acks) this.copied.inc({ outcome: ack.duplicate ? 'duplicate' : 'stored' });
  }
}

/** What is copied of a message: its digest and headers (the rows' length left out), or its rows when it has no digest. */
function copyOf(message: WrittenFlowMessage): { data: Uint8Array; headers: MsgHdrs } {
  const h = natsHeaders();
  for (const [name, values] of message.headers ?? []) if (name !== telemetryHeaderNames.rowsBytes) for (const v of values) h.append(name, v);
  const digest = digestOf(message);
  if (!digest) return { data: rowsOf(message), headers: h };
  h.set(telemetryHeaderNames.digest, '1');
  return { data: digest, headers: h };
}

/** Creates the detector's consumer, or brings it to this configuration: the holder runs it before each open, so a deleted one comes back. */
export async function ensureDetectorConsumer(jsm: JetStreamManager, prefix: string, ackWaitMs: number, maxAckPending: number): Promise<void> {
  await putConsumer(jsm, names(prefix).detection, detectorConsumer(prefix, ackWaitMs, maxAckPending));
}
