import type { LookupAll } from '../application/outbound-guard';
import type { Logger } from '../observability/logger';
import { counter, type Registry } from '../observability/metrics';
import type { WebhooksRepo } from '../storage/webhooks-repo';
import type { NatsClient } from '../streams/nats-client';
import { outboxNames } from '../streams/outbox';
import { WebhookDeliveryQueue } from '../streams/webhook-queue';
import { DurableConsumer } from './durable-consumer';
import { deliverer, type DeliveryConfig } from './webhook-deliverer';
import { fanOut } from './webhook-fanout';
import { WebhookLookups } from './webhook-lookups';

/** A new, changed or deleted subscription reaches the fan-out and the deliverer within this. */
const subscriptionCacheMs = 2_000;

export interface WebhookNotifierConfig extends DeliveryConfig {
  prefix: string;
  /** Deliveries attempted at once by this process. */
  concurrency: number;
}

/**
 * The outbox's two durable consumers: the fan-out, and the deliveries'. The
 * ack wait covers one attempt (DNS, connect, answer) with room to spare.
 */
export function notifierConsumers(config: Pick<WebhookNotifierConfig, 'prefix' | 'timeoutMs'>) {
  const n = outboxNames(config.prefix);
  const ackWaitMs = config.timeoutMs * 3 + 5_000;
  return { fanout: { stream: n.outbox, durable: n.fanout, ackWaitMs }, deliverer: { stream: n.deliveries, durable: n.deliverer, ackWaitMs } };
}

/**
 * The webhook deliverer of the stream-workers role: the outbox's fan-out
 * and the deliveries' consumer, both durable consumers shared by every
 * stream-workers process. Started after the outbox topology exists.
 */
export class WebhookNotifier {
  private readonly consumers: DurableConsumer[];

  constructor(config: WebhookNotifierConfig, deps: { nats: NatsClient; webhooks: WebhooksRepo; registry: Registry; log: Logger; lookup?: LookupAll }) {
    const consumers = notifierConsumers(config);
    const restarts = counter(deps.registry, {
      name: 'nettel_webhook_consume_restarts_total',
      help: 'Re-opened pulls of the outbox consumers, by consumer',
      labelNames: ['consumer'] as const,
    });
    const queue = new WebhookDeliveryQueue({ nats: deps.nats, prefix: config.prefix });
    const webhooks = new WebhookLookups(deps.webhooks, { ttlMs: subscriptionCacheMs });
    this.consumers = [
      new DurableConsumer(
        { ...consumers.fanout, concurrency: 16 },
        { nats: deps.nats, log: deps.log, restarts, handle: fanOut({ webhooks, queue, registry: deps.registry }) },
      ),
      new DurableConsumer(
        { ...consumers.deliverer, concurrency: config.concurrency },
        { nats: deps.nats, log: deps.log, restarts, handle: deliverer(config, { ...deps, webhooks }) },
      ),
    ];
  }

  async start(): Promise<void> {
    for (const c of this.consumers) await c.start();
  }

  async stop(): Promise<void> {
    for (const c of [...this.consumers].reverse()) await c.stop();
  }
}
