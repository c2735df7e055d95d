import { headers as natsHeaders, type JsMsg } from 'nats';
import type { z } from 'zod';
import { telemetryHeaderNames } from '../../core/telemetry-headers';
import type { Logger } from '../../observability/logger';
import { counter, type Registry } from '../../observability/metrics';
import type { NatsClient } from '../../streams/nats-client';
import { names } from '../../streams/names';

/** What a refused message was taken for: its dead letter's subject is `<prefix>.dead.webhook.<org>` either way. */
export type WebhookConsumer = 'fanout' | 'delivery';

/** A message read from the outbox's streams, or why it is refused. */
export type ReadMessage<T> = { ok: true; value: T } | { ok: false; reason: string };

/** The message's JSON checked against the schema of its kind; no field of it is used before this. */
export function readMessage<T>(m: JsMsg, schema: z.ZodType<T>): ReadMessage<T> {
  let value: unknown;
  try {
    value = JSON.parse(m.string());
  } catch {
    return { ok: false, reason: 'not_json' };
  }
  const parsed = schema.safeParse(value);
  return parsed.success ? { ok: true, value: parsed.data } : { ok: false, reason: 'not_the_schema' };
}

/**
 * Messages of the outbox's streams that are not what the service publishes
 * (a schema they fail, a workspace their subject does not name, a
 * subscription they do not match): whoever may publish there is not trusted.
 * Each goes to the dead-letter stream for an operator to inspect, is counted,
 * and is acknowledged: it is never delivered.
 */
export class RefusedWebhookMessages {
  private readonly refused;

  constructor(private readonly deps: { nats: NatsClient; prefix: string; registry: Registry; log: Logger }) {
    this.refused = counter(deps.registry, {
      name: 'nettel_webhook_messages_refused_total',
      help: 'Messages of the outbox and the deliveries the webhook consumers refused (dead-lettered, never delivered), by consumer and reason',
      labelNames: ['consumer', 'reason'] as const,
    });
  }

  /** Dead-letters the message and acknowledges it; a dead-letter stream that refuses leaves it to be offered again. */
  async refuse(m: JsMsg, consumer: WebhookConsumer, reason: string): Promise<void> {
    this.refused.inc({ consumer, reason });
    this.deps.log.warn({ subject: m.subject, consumer, reason }, 'refused a message on the webhook streams');
    const h = natsHeaders();
    h.set(telemetryHeaderNames.error, `refused by the webhook ${consumer}: ${reason.replace(/_/g, ' ')}`);
    // The subject's org token, when it has one that a subject may carry; the body goes as it came.
    const org = /^[A-Za-z0-9_-]{1,64}$/.test(m.subject.split('.')[2] ?? '') ? m.subject.split('.')[2]! : 'unknown';
    try {
      await this.deps.nats.js().publish(names(this.deps.prefix).deadLetterSubject('webhook', org), m.data, { headers: h });
    } catch (err) {
      this.deps.log.error({ err, subject: m.subject }, 'unable to dead-letter a refused webhook message; it is offered again');
      m.nak(5_000);
      return;
    }
    m.ack();
  }
}
