import type { JsMsg } from 'nats';
import { cloudEventSchema } from '../../core/webhook-events';
import type { WebhooksRepo } from '../../storage/webhooks-repo';
import type { WebhookDeliveryQueue } from '../../streams/webhook-queue';
import { counter, type Registry } from '../../observability/metrics';
import { readMessage, type RefusedWebhookMessages } from './webhook-messages';

/**
 * The outbox's first consumer: each event is queued once for every live
 * subscription of its workspace that takes its type, then acknowledged. A
 * crash part-way queues it again; the deliveries stream drops the copies.
 * An event that is not the service's shape, or whose subject
 * (`<prefix>.outbox.<org>`) names another workspace than it does, is refused.
 */
export function fanOut(deps: { webhooks: Pick<WebhooksRepo, 'live'>; queue: Pick<WebhookDeliveryQueue, 'queue'>; registry: Registry; refused: Pick<RefusedWebhookMessages, 'refuse'> }) {
  const queued = counter(deps.registry, { name: 'nettel_webhook_fanout_total', help: 'Event deliveries queued, one per event and subscription, by type', labelNames: ['type'] as const });
  return async (m: JsMsg): Promise<void> => {
    const read = readMessage(m, cloudEventSchema);
    if (!read.ok) return deps.refused.refuse(m, 'fanout', read.reason);
    const event = read.value;
    if (m.subject.split('.')[2] !== event.workspace) return deps.refused.refuse(m, 'fanout', 'workspace_mismatch');
    const subscribed = (await deps.webhooks.live(event.workspace)).filter((w) => (w.events as string[]).includes(event.type));
    await Promise.all(subscribed.map((w) => deps.queue.queue({ webhook_id: w.id, event })));
    queued.inc({ type: event.type }, subscribed.length);
    m.ack();
  };
}
