import type { JetStreamManager } from 'nats';
import type { CloudEvent } from '../core/webhook-events';
import { counter, engineErrorsCounter, type Registry } from '../observability/metrics';
import { automationNames } from './names';
import type { NatsClient } from './nats-client';
import type { EventOutbox } from './outbox';
import { workQueue } from './outbox';
import { putStream } from './put-stream';

/**
 * Incidents that may start automation runs, or end what a run holds: the
 * correlator's `incident.opened`, `incident.escalated` and `incident.resolved` events, also published to `<PREFIX>_AUTOMATION_TRIGGERS`
 * (`<prefix>.autotrigger.<org>`, work-queue retention, the event id as
 * `Nats-Msg-Id`), where the temporal-worker role's automation starter takes
 * them. Published before the correlator writes, as the outbox's are: a crash
 * in between derives the same events again, stored once.
 */
export const triggerEventTypes: readonly string[] = ['incident.opened', 'incident.escalated', 'incident.resolved'];

/** The triggers stream's byte limit: a trigger is an incident event, small; 256 MiB holds a very long outage of the starter. */
const triggersMaxBytes = 256 * 1024 ** 2;

export async function ensureAutomationTriggers(jsm: JetStreamManager, prefix: string, replicas: number): Promise<void> {
  const n = automationNames(prefix);
  await putStream(jsm, workQueue(n.triggers, [n.triggerSubjects], triggersMaxBytes, replicas));
}

/** Publishes the triggering events among those given; resolves once JetStream holds each. */
export class AutomationTriggers implements EventOutbox {
  private readonly published;
  private readonly engineErrors;

  constructor(private readonly deps: { nats: Pick<NatsClient, 'js'>; prefix: string; registry: Registry }) {
    this.published = counter(deps.registry, { name: 'nettel_automation_triggers_published_total', help: 'Incident events stored as automation triggers, by type', labelNames: ['type'] as const });
    this.engineErrors = engineErrorsCounter(deps.registry);
  }

  async publish(events: readonly CloudEvent[]): Promise<void> {
    const n = automationNames(this.deps.prefix);
    const js = this.deps.nats.js();
    await Promise.all(
      events
        .filter((e) => triggerEventTypes.includes(e.type))
        .map(async (event) => {
          try {
            const ack = await js.publish(n.triggerSubject(event.workspace), JSON.stringify(event), { msgID: event.id, timeout: 10_000 });
            if (!ack.duplicate) this.published.inc({ type: event.type });
          } catch (err) {
            this.engineErrors.inc({ engine: 'nats', operation: 'automation_trigger_publish' });
            throw new Error(`unable to publish automation trigger ${event.id}`, { cause: err });
          }
        }),
    );
  }
}

/** Events to the outbox and to the triggers, both stored before the producer goes on. */
export const bothOutboxes = (a: EventOutbox, b: EventOutbox): EventOutbox => ({
  publish: async (events) => {
    await Promise.all([a.publish(events), b.publish(events)]);
  },
});
