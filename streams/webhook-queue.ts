import type { CloudEvent } from '../core/webhook-events';
import type { NatsClient } from './nats-client';
import { outboxNames } from './names';

/** One event to deliver to one subscription: a message of `<PREFIX>_WEBHOOK_DELIVERIES`. */
export interface DeliveryTask {
  webhook_id: string;
  event: CloudEvent;
}

/** Queues an event for one subscription; JetStream drops a second copy (same event and subscription) within an hour. */
export class WebhookDeliveryQueue {
  constructor(private readonly deps: { nats: Pick<NatsClient, 'js'>; prefix: string }) {}

  async queue(task: DeliveryTask): Promise<void> {
    const n = outboxNames(this.deps.prefix);
    await this.deps.nats
      .js()
      .publish(n.deliverySubject(task.event.workspace, task.webhook_id), JSON.stringify(task), { msgID: `${task.event.id}:${task.webhook_id}`, timeout: 10_000 });
  }
}
