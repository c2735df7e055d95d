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
import type { CloudEvent } from '../core/webhook-events';
import { counter, engineErrorsCounter, type Registry } from '../observability/metrics';
import type { NatsClient } from './nats-client';
import { putStream } from './put-stream';
import { outboxNames } from './names';

/**
 * The notification outbox as JetStream topology:
 *
 * - `<PREFIX>_OUTBOX` takes `<prefix>.outbox.<org>`: every CloudEvent the
 *   service produces, published before the producer acknowledges its own
 *   input. `Nats-Msg-Id` is the event id and the duplicate window is an hour,
 *   so a producer that runs again after a crash, or two workers that derived
 *   the same change, store it once. Work-queue retention: an event leaves
 *   once the fan-out has queued it for every subscription.
 * - `<PREFIX>_WEBHOOK_DELIVERIES` takes `<prefix>.whdeliver.<org>.<webhook>`:
 *   one message per event and subscription (id `<event>:<webhook>`), retried
 *   on its own schedule by NAK with a delay, and acknowledged when delivered
 *   or given up.
 */

const duplicateWindowMs = 3_600_000;
/** The outbox streams' byte limit: at most 1 GiB, and never more than the telemetry stream's. */
const outboxMaxBytes = (telemetryMaxBytes: number) => Math.min(telemetryMaxBytes, 1024 ** 3);

export const workQueue = (name: string, subjects: string[], maxBytes: number, replicas: number): Partial<StreamConfig> & { name: string } => ({
  name,
  subjects,
  retention: RetentionPolicy.Workqueue,
  storage: StorageType.File,
  // Full: a producer's publish fails and it retries its input; nothing produced is dropped.
  discard: DiscardPolicy.New,
  max_bytes: maxBytes,
  duplicate_window: nanos(duplicateWindowMs),
  num_replicas: replicas,
});

/** A durable consumer of the outbox's streams; `ackWaitMs` covers one delivery attempt with room to spare. */
export const outboxConsumer = (durable: string, ackWaitMs: number): Partial<ConsumerConfig> & { durable_name: string } => ({
  durable_name: durable,
  ack_policy: AckPolicy.Explicit,
  ack_wait: nanos(ackWaitMs),
  max_deliver: -1,
  max_ack_pending: 1_000,
});

export async function ensureOutboxTopology(jsm: JetStreamManager, prefix: string, telemetryMaxBytes: number, replicas: number): Promise<void> {
  const n = outboxNames(prefix);
  await putStream(jsm, workQueue(n.outbox, [n.outboxSubjects], outboxMaxBytes(telemetryMaxBytes), replicas));
  await putStream(jsm, workQueue(n.deliveries, [n.deliverySubjects], outboxMaxBytes(telemetryMaxBytes), replicas));
}

/** Where producers put events: the correlator, the incident service, the replay activities. */
export interface EventOutbox {
  publish(events: readonly CloudEvent[]): Promise<void>;
}

/** Publishes events to the outbox and resolves once JetStream holds every one of them. */
export class JetStreamOutbox implements EventOutbox {
  private readonly published;
  private readonly duplicates;
  private readonly engineErrors;

  constructor(private readonly deps: { nats: Pick<NatsClient, 'js'>; prefix: string; registry: Registry }) {
    this.published = counter(deps.registry, { name: 'nettel_webhook_events_published_total', help: 'Events stored in the outbox, by type', labelNames: ['type'] as const });
    this.duplicates = counter(deps.registry, {
      name: 'nettel_webhook_events_duplicate_total',
      help: 'Events the outbox already held (the same change derived again), by type',
      labelNames: ['type'] as const,
    });
    this.engineErrors = engineErrorsCounter(deps.registry);
  }

  async publish(events: readonly CloudEvent[]): Promise<void> {
    const n = outboxNames(this.deps.prefix);
    const js = this.deps.nats.js();
    await Promise.all(
      events.map(async (event) => {
        try {
          const ack = await js.publish(n.outboxSubject(event.workspace), JSON.stringify(event), { msgID: event.id, timeout: 10_000 });
          (ack.duplicate ? this.duplicates : this.published).inc({ type: event.type });
        } catch (err) {
          this.engineErrors.inc({ engine: 'nats', operation: 'outbox_publish' });
          throw new Error(`unable to publish event ${event.id} to the outbox`, { cause: err });
        }
      }),
    );
  }
}
