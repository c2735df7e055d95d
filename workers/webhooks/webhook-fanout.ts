import type { JsMsg } from 'nats';
import type { CloudEvent } from '../../core/webhook-events';
import type { WebhooksRepo } from '../../storage/webhooks-repo';
import type { WebhookDeliveryQueue } from '../../streams/webhook-queue';
import { counter, type Registry } from '../../observability/metrics';

/**
 * The outbox's first consumer: each event is queued once for every live
 * subscription of its workspace that takes its type, then acknowledged. A
 * crash part-way queues it again; the deliveries stream drops the copies.
 */
export function fanOut(deps: { webhooks: Pick<WebhooksRepo, 'live'>; queue: Pick<WebhookDeliveryQueue, 'queue'>; registry: Registry }) {
  const queued = counter(deps.registry, { name: 'nettel_webhook_fanout_total', help: 'Event deliveries queued, one per event and subscription, by type', labelNames: ['type'] as const });
  return async (m: JsMsg): Promise<void> => {
    const event = JSON.parse(m.string()) as CloudEvent;
    const subscribed = (await deps.webhooks.live(event.workspace)).filter((w) => (w.events as string[]).includes(event.type));
    await Promise.all(subscribed.map((w) => deps.queue.queue({ webhook_id: w.id, event })));
    queued.inc({ type: event.type }, subscribed.length);
    m.ack();
  };
}
