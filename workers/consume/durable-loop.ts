import type { JsMsg } from 'nats';
import type { Logger } from '../../observability/logger';
import type { NatsClient } from '../../streams/nats-client';
import { outboxConsumer } from '../../streams/outbox';
import { putConsumer } from '../../streams/put-stream';
import { ConcurrentHandler } from './concurrent-handler';
import { ConsumeLoop, defaultReopenBackoff } from './consume-loop';
import { JetStreamPull } from './jetstream-pull';

/** A durable consumer of a work-queue stream, read by the one consume loop. */
export interface DurableConsumer {
  stream: string;
  durable: string;
  /** Covers one handling of a message with room to spare. */
  ackWaitMs: number;
  /** Messages handled at once. */
  concurrency: number;
}

/**
 * The consume loop of one durable consumer whose messages are handled one by
 * one (`handle` acknowledges, NAKs or terminates each; one that throws is
 * offered again after a second): the webhook fan-out and deliveries, the
 * automation starter. The consumer is made again before each open, so a
 * deleted one comes back on the next pull. Re-opens count in `restarts`.
 */
export function durableConsumeLoop(
  c: DurableConsumer,
  handle: (m: JsMsg) => Promise<void>,
  deps: { nats: NatsClient; log: Logger; restarts: { inc(labels: { consumer: string; reason: string }): void } },
): ConsumeLoop<JsMsg> {
  const pull = new JetStreamPull(
    { stream: c.stream, consumer: c.durable, maxMessages: c.concurrency, ackWaitMs: c.ackWaitMs },
    { nats: deps.nats, prepare: () => putConsumer(deps.nats.jsm, c.stream, outboxConsumer(c.durable, c.ackWaitMs)).then(() => undefined) },
  );
  return new ConsumeLoop<JsMsg>(defaultReopenBackoff, {
    source: pull,
    batches: new ConcurrentHandler({ consumer: c.durable, concurrency: c.concurrency }, { handle, log: deps.log }),
    restarts: { inc: ({ reason }) => deps.restarts.inc({ consumer: c.durable, reason }) },
    consumer: c.durable,
    log: deps.log,
  });
}
