import type { DeliveryTask } from '../core/webhook-events';
import type { NatsClient } from './nats-client';
import { outboxNames } from './names';

export type { DeliveryTask };

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
