import type { LookupAll } from '../../application/outbound-guard';
import type { Logger } from '../../observability/logger';
import { counter, type Registry } from '../../observability/metrics';
import type { WebhooksRepo } from '../../storage/webhooks-repo';
import type { NatsClient } from '../../streams/nats-client';
import { WebhookDeliveryQueue } from '../../streams/webhook-queue';
import type { JsMsg } from 'nats';
import type { ConsumeLoop } from '../consume/consume-loop';
import { durableConsumeLoop, type DurableConsumer } from '../consume/durable-loop';
import { deliverer, type DeliveryConfig } from './webhook-deliverer';
import { fanOut } from './webhook-fanout';
import { WebhookLookups } from './webhook-lookups';
import { RefusedWebhookMessages } from './webhook-messages';
import { outboxNames } from '../../streams/names';

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
 * stream-workers process, each read by the one consume loop (so each shows
 * in /healthz). Started after the outbox topology exists.
 */
export class WebhookNotifier {
  private readonly loops: Array<{ name: string; loop: ConsumeLoop<JsMsg> }>;

  constructor(config: WebhookNotifierConfig, deps: { nats: NatsClient; webhooks: WebhooksRepo; registry: Registry; log: Logger; lookup?: LookupAll }) {
    const consumers = notifierConsumers(config);
    const restarts = counter(deps.registry, {
      name: 'nettel_webhook_consume_restarts_total',
      help: 'Re-opened pulls of the outbox consumers, by consumer and the reason consuming stopped',
      labelNames: ['consumer', 'reason'] as const,
    });
    const queue = new WebhookDeliveryQueue({ nats: deps.nats, prefix: config.prefix });
    const webhooks = new WebhookLookups(deps.webhooks, { ttlMs: subscriptionCacheMs });
    const refused = new RefusedWebhookMessages({ nats: deps.nats, prefix: config.prefix, registry: deps.registry, log: deps.log });
    const loop = (c: DurableConsumer, handle: (m: JsMsg) => Promise<void>) => durableConsumeLoop(c, handle, { nats: deps.nats, log: deps.log, restarts });
    this.loops = [
      { name: 'webhook-fanout', loop: loop({ ...consumers.fanout, concurrency: 16 }, fanOut({ webhooks, queue, registry: deps.registry, refused })) },
      { name: 'webhook-delivery', loop: loop({ ...consumers.deliverer, concurrency: config.concurrency }, deliverer(config, { ...deps, webhooks, refused })) },
    ];
  }

  /** Both consumers, or neither: a start that fails stops the loop it had started. */
  async start(): Promise<void> {
    const started: ConsumeLoop<JsMsg>[] = [];
    try {
      for (const { loop } of this.loops) {
        await loop.start();
        started.push(loop);
      }
    } catch (err) {
      for (const loop of started.reverse()) await loop.stop();
      throw err;
    }
  }

  async stop(): Promise<void> {
    for (const { loop } of [...this.loops].reverse()) await loop.stop();
  }

  /** For /healthz: each consumer is up while it consumes. */
  get probes(): Array<{ name: string; probe: () => Promise<{ detail: string }> }> {
    return this.loops.map(({ name, loop }) => ({ name, probe: () => loop.probe() }));
  }
}
