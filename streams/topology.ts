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
import { ensureAutomationTriggers } from './automation-triggers';
import { defaultDetectionFeedConfig, ensureDetectionFeed } from './detection-feed';
import { ensureOutboxTopology } from './outbox';
import { names } from './names';
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
 * - Two durable pull consumers shared by every stream worker process, one
 *   per lane: flows and metric events (`<PREFIX>_WRITERS`), correlation
 *   signals (`<PREFIX>_SIGNALS`), so a flow backlog after an outage never
 *   holds a fresh signal back (issue 19). Their subjects do not overlap, as a
 *   work-queue stream requires.
 * - Stream `<PREFIX>_DETECTION` and its consumer `<PREFIX>_DETECTOR`: the
 *   copies of written flow messages the rate detectors read
 *   (streams/detection-feed.ts says why a copy and not a third consumer here).
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
  // Kept alive from arrival (workers/consume/jetstream-pull.ts), a message waits this long only when its worker died or stalled:
  // it bounds the drain after a kill -9 (bench/results/2026-11-29-ack-wait-kept-alive.md), not how long a worker may take.
  ackWaitMs: 10_000,
  maxAckPending: 10_000,
  deadLetterMaxBytes: 1024 ** 3,
  replicas: 1,
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
    subjects: [n.deadLetterSubjects],
    retention: RetentionPolicy.Limits,
    storage: StorageType.File,
    discard: DiscardPolicy.New,
    max_bytes: config.deadLetterMaxBytes,
    num_replicas: config.replicas,
  });
  // The notification outbox and its deliveries (streams/outbox.ts).
  await ensureOutboxTopology(jsm, config.prefix, config.maxBytes, config.replicas);
  await ensureAutomationTriggers(jsm, config.prefix, config.replicas);
  // The rate detectors' copy of written flows (streams/detection-feed.ts), never larger than the telemetry stream.
  const feed = defaultDetectionFeedConfig(config.prefix);
  await ensureDetectionFeed(jsm, { ...feed, maxBytes: Math.min(feed.maxBytes, config.maxBytes), replicas: config.replicas }, config.ackWaitMs);

  for (const lane of lanes) await ensureWritersConsumer(jsm, config, lane);
}

/** The writers' lanes: bulk telemetry (flows, metric events), and correlation signals on their own. */
export type Lane = 'bulk' | 'signals';
export const lanes: readonly Lane[] = ['bulk', 'signals'];

/** A lane's durable consumer and the subjects it takes. */
export function laneConsumer(prefix: string, lane: Lane): { name: string; subjects: string[] } {
  const n = names(prefix);
  return lane === 'bulk' ? { name: n.writers, subjects: n.writersSubjects } : { name: n.signals, subjects: n.signalsSubjects };
}

/** A lane's durable consumer: what ensureTopology creates, and what a worker recreates if it was deleted. */
function writersConsumerConfig(config: Pick<TopologyConfig, 'prefix' | 'ackWaitMs' | 'maxAckPending'>, lane: Lane): Partial<ConsumerConfig> & { durable_name: string } {
  const { name, subjects } = laneConsumer(config.prefix, lane);
  return {
    durable_name: name,
    filter_subjects: subjects,
    ack_policy: AckPolicy.Explicit,
    ack_wait: nanos(config.ackWaitMs),
    max_ack_pending: config.maxAckPending,
    max_waiting: 512,
  };
}

/**
 * Creates a lane's consumer, or updates it to the topology's config; true
 * when it had to be created. The bulk lane goes first: a writers' consumer
 * of an earlier release took every subject, and must narrow before the
 * signals' consumer may exist beside it.
 */
export async function ensureWritersConsumer(
  jsm: JetStreamManager,
  config: Pick<TopologyConfig, 'prefix' | 'ackWaitMs' | 'maxAckPending'>,
  lane: Lane = 'bulk',
): Promise<boolean> {
  if (lane === 'signals') await putConsumer(jsm, names(config.prefix).stream, writersConsumerConfig(config, 'bulk'));
  return putConsumer(jsm, names(config.prefix).stream, writersConsumerConfig(config, lane));
}
