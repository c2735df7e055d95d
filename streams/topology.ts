import {
  AckPolicy,
  DiscardPolicy,
  RetentionPolicy,
  StorageType,
  nanos,
  type ConsumerConfig,
  type JetStreamManager,
  type StreamConfig,
} from 'nats';
import type { StreamKind } from '../core/telemetry';
import { ensureOutboxTopology } from './outbox';
import { putConsumer, putStream } from './put-stream';

/**
 * The JetStream topology as code, created or updated idempotently at start.
 *
 * - Stream `<PREFIX>_TELEMETRY` takes `<prefix>.tel.<kind>.<org>`: the org
 *   is in every subject. Work-queue retention: a message leaves the stream
 *   once a worker acknowledged it, which it does only after ClickHouse has
 *   its rows. `discard: new` with a byte limit: when the backlog is full, a
 *   publish fails and the API answers 503; nothing accepted is dropped.
 * - A two-minute de-duplication window on `Nats-Msg-Id`.
 * - One durable pull consumer shared by every stream worker process.
 * - Stream `<PREFIX>_DEAD_LETTER` keeps messages ClickHouse refused
 *   `maxDeliveries` times, for an operator to inspect and replay. `discard:
 *   new`: when full it refuses the next dead letter (which then stays in the
 *   telemetry stream, unacknowledged) and never drops one it holds.
 */
export interface TopologyConfig {
  prefix: string;
  maxBytes: number;
  maxAgeMs: number;
  duplicateWindowMs: number;
  ackWaitMs: number;
  maxAckPending: number;
  deadLetterMaxBytes: number;
  /** Copies JetStream keeps of every stream (NATS_REPLICAS); consumers follow their stream. */
  replicas: number;
}

export const defaultTopology = (prefix: string): TopologyConfig => ({
  prefix,
  maxBytes: 8 * 1024 ** 3,
  // No age limit: a backlog waits for the workers however long they are away.
  maxAgeMs: 0,
  duplicateWindowMs: 120_000,
  ackWaitMs: 30_000,
  maxAckPending: 10_000,
  deadLetterMaxBytes: 1024 ** 3,
  replicas: 1,
});

export const names = (prefix: string) => ({
  stream: `${prefix.toUpperCase()}_TELEMETRY`,
  writers: `${prefix.toUpperCase()}_WRITERS`,
  subjects: `${prefix}.tel.>`,
  /**
   * A collected flow's subject adds its exporter (`exp-` and the address with
   * `.` and `:` as `_`): one exporter's flows keep their order in the stream.
   */
  subject: (kind: StreamKind, orgId: string, exporter?: string) =>
    exporter === undefined ? `${prefix}.tel.${kind}.${orgId}` : `${prefix}.tel.${kind}.${orgId}.exp-${exporter.replace(/[.:]/g, '_')}`,
  deadLetter: `${prefix.toUpperCase()}_DEAD_LETTER`,
  deadLetterSubject: (kind: string, orgId: string) => `${prefix}.dead.${kind}.${orgId}`,
});

export async function ensureTopology(jsm: JetStreamManager, config: TopologyConfig): Promise<void> {
  const n = names(config.prefix);
  const stream: Partial<StreamConfig> & { name: string } = {
    name: n.stream,
    subjects: [n.subjects],
    retention: RetentionPolicy.Workqueue,
    storage: StorageType.File,
    discard: DiscardPolicy.New,
    max_bytes: config.maxBytes,
    max_age: nanos(config.maxAgeMs),
    duplicate_window: nanos(config.duplicateWindowMs),
    num_replicas: config.replicas,
  };
  await putStream(jsm, stream);
  await putStream(jsm, {
    name: n.deadLetter,
    subjects: [`${config.prefix}.dead.>`],
    retention: RetentionPolicy.Limits,
    storage: StorageType.File,
    discard: DiscardPolicy.New,
    max_bytes: config.deadLetterMaxBytes,
    num_replicas: config.replicas,
  });
  // The notification outbox and its deliveries (streams/outbox.ts).
  await ensureOutboxTopology(jsm, config.prefix, config.maxBytes, config.replicas);

  await ensureWritersConsumer(jsm, config);
}

/** The writers' durable consumer: what ensureTopology creates, and what a worker recreates if it was deleted. */
function writersConsumerConfig(config: Pick<TopologyConfig, 'prefix' | 'ackWaitMs' | 'maxAckPending'>): Partial<ConsumerConfig> & { durable_name: string } {
  return {
    durable_name: names(config.prefix).writers,
    ack_policy: AckPolicy.Explicit,
    ack_wait: nanos(config.ackWaitMs),
    max_ack_pending: config.maxAckPending,
    max_waiting: 512,
  };
}

/** Creates the writers' consumer, or updates it to the topology's config; true when it had to be created. */
export async function ensureWritersConsumer(
  jsm: JetStreamManager,
  config: Pick<TopologyConfig, 'prefix' | 'ackWaitMs' | 'maxAckPending'>,
): Promise<boolean> {
  return putConsumer(jsm, names(config.prefix).stream, writersConsumerConfig(config));
}
