import type { JsMsg } from 'nats';
import { OutboundRefused, checkTarget, type LookupAll } from '../../application/outbound-guard';
import { retryDelayMs, type RetrySchedule } from '../../core/outbound';
import { open, type SealingKeys } from '../../core/secret-box';
import type { Webhook, WebhookDelivery } from '../../core/webhook';
import { deliveryTaskSchema, testEventType, type DeliveryTask } from '../../core/webhook-events';
import { signatureHeaders } from '../../core/webhook-signature';
import type { Logger } from '../../observability/logger';
import { counter, histogram, type Registry } from '../../observability/metrics';
import type { WebhooksRepo } from '../../storage/webhooks-repo';
import { postOnce, type PostLimits, type PostResult } from './webhook-http';
import { readMessage, type RefusedWebhookMessages } from './webhook-messages';

export interface DeliveryConfig extends PostLimits {
  allowedHosts: ReadonlySet<string>;
  secretsKey?: string;
  /** Keys of before a rotation (WEBHOOK_SECRETS_PREVIOUS_KEYS): secrets they sealed still open. */
  previousSecretsKeys?: readonly string[];
  retry: RetrySchedule;
}

export interface DeliveryDeps {
  webhooks: Pick<WebhooksRepo, 'get' | 'put' | 'recordAttempt'>;
  registry: Registry;
  log: Logger;
  refused: Pick<RefusedWebhookMessages, 'refuse'>;
  lookup?: LookupAll;
  now?: () => number;
  random?: () => number;
}

function deliveryMetrics(registry: Registry) {
  return {
    attempts: counter(registry, {
      name: 'nettel_webhook_attempts_total',
      help: 'Webhook delivery attempts by result: 2xx, 3xx (not followed), 4xx, 5xx, error (no answer), refused (outbound rules)',
      labelNames: ['result'] as const,
    }),
    outcomes: counter(registry, {
      name: 'nettel_webhook_deliveries_total',
      help: 'Webhook deliveries by outcome: delivered, retrying (an attempt failed, another is scheduled), failed (given up), skipped (subscription deleted)',
      labelNames: ['outcome'] as const,
    }),
    latency: histogram(registry, { name: 'nettel_webhook_attempt_seconds', help: 'Time of one delivery attempt', buckets: [0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10] }),
    marked: counter(registry, { name: 'nettel_webhook_subscriptions_marked_failing_total', help: 'Subscriptions marked failing after a delivery exhausted its retries' }),
  };
}

const resultLabel = (r: PostResult, refused: boolean) =>
  refused ? 'refused' : r.status === 0 ? 'error' : `${Math.floor(r.status / 100)}xx`;

/**
 * The deliveries stream's consumer: one attempt per message. The URL is
 * checked again (DNS included) before every attempt; the body is the
 * CloudEvent, signed. Delivered: acknowledged. Failed: offered again after
 * the schedule's delay (NAK with a delay), until the next attempt would
 * start more than `giveUpAfterMs` after the first; then the delivery is
 * `failed`, the subscription `failing`, and the message acknowledged. Each
 * attempt is a row of the delivery log. A task is checked before anything
 * of it is used: the service's shape (core/webhook-events), the workspace and
 * subscription its subject names (`<prefix>.whdeliver.<org>.<webhook>`), and
 * a subscription of that workspace that takes its event's type; one that is
 * not is dead-lettered and counted, never signed or sent.
 */
export function deliverer(config: DeliveryConfig, deps: DeliveryDeps): (m: JsMsg) => Promise<void> {
  const d = new Deliverer(config, deps);
  return (m) => d.handle(m);
}

class Deliverer {
  private readonly metrics;
  private readonly now: () => number;
  private readonly random: () => number;

  constructor(
    private readonly config: DeliveryConfig,
    private readonly deps: DeliveryDeps,
  ) {
    this.metrics = deliveryMetrics(deps.registry);
    this.now = deps.now ?? Date.now;
    this.random = deps.random ?? Math.random;
  }

  private sealingKeys(): SealingKeys | undefined {
    return this.config.secretsKey ? { current: this.config.secretsKey, previous: this.config.previousSecretsKeys } : undefined;
  }

  async handle(m: JsMsg): Promise<void> {
    const read = readMessage(m, deliveryTaskSchema);
    if (!read.ok) return this.deps.refused.refuse(m, 'delivery', read.reason);
    const task: DeliveryTask = read.value;
    const [, , org, webhookId] = m.subject.split('.');
    if (org !== task.event.workspace || webhookId !== task.webhook_id) return this.deps.refused.refuse(m, 'delivery', 'workspace_mismatch');
    const webhook = await this.deps.webhooks.get(task.event.workspace, task.webhook_id);
    if (!webhook || webhook.status === 'deleted') {
      this.metrics.outcomes.inc({ outcome: 'skipped' });
      m.ack();
      return;
    }
    // The fan-out queues an event only for subscriptions that take its type; a test event only for the subscription tested.
    const takes = task.event.type === testEventType ? task.event.subject === webhook.id : (webhook.events as string[]).includes(task.event.type);
    if (webhook.org_id !== task.event.workspace || !takes) return this.deps.refused.refuse(m, 'delivery', 'not_subscribed');
    const { result, refused } = await this.attempt(webhook, task);
    this.metrics.attempts.inc({ result: resultLabel(result, refused) });
    this.metrics.latency.observe(result.latencyMs / 1000);
    await this.settle(m, webhook, task, result);
  }

  private async attempt(webhook: Webhook, task: DeliveryTask): Promise<{ result: PostResult; refused: boolean }> {
    const body = JSON.stringify(task.event);
    const headers = {
      'content-type': 'application/cloudevents+json',
      ...signatureHeaders(open(webhook.secret, this.sealingKeys(), { orgId: webhook.org_id, id: webhook.id }), task.event.id, Math.floor(this.now() / 1000), body),
    };
    try {
      const target = await checkTarget(webhook.url, this.config.allowedHosts, this.deps.lookup);
      return { result: await postOnce(target, body, headers, this.config), refused: false };
    } catch (err) {
      if (!(err instanceof OutboundRefused)) throw err;
      return { result: { status: 0, latencyMs: 0, error: `refused: ${err.message}` }, refused: true };
    }
  }

  private async settle(m: JsMsg, webhook: Webhook, task: DeliveryTask, result: PostResult): Promise<void> {
    const at = this.now();
    const firstAt = Math.min(at, Math.floor(m.info.timestampNanos / 1e6));
    const tries = m.info.deliveryCount;
    const entry: WebhookDelivery = {
      org_id: webhook.org_id,
      webhook_id: webhook.id,
      event_id: task.event.id,
      event_type: task.event.type,
      status: 'delivered',
      attempts: tries,
      response_code: result.status,
      latency_ms: result.latencyMs,
      error: result.error ?? '',
      first_attempt_at: firstAt,
      last_attempt_at: at,
      next_attempt_at: 0,
    };
    if (!result.error) {
      await this.deps.webhooks.recordAttempt(entry);
      if (webhook.status === 'failing') await this.deps.webhooks.put({ ...webhook, status: 'active', failing_since: 0, updated_at: at, version: webhook.version + 1 });
      this.metrics.outcomes.inc({ outcome: 'delivered' });
      m.ack();
      return;
    }
    const delay = retryDelayMs(tries, this.config.retry, this.random());
    const giveUp = at + delay - firstAt > this.config.retry.giveUpAfterMs;
    await this.deps.webhooks.recordAttempt({ ...entry, status: giveUp ? 'failed' : 'retrying', next_attempt_at: giveUp ? 0 : at + delay });
    if (giveUp) await this.giveUp(webhook, task, tries, at);
    else this.metrics.outcomes.inc({ outcome: 'retrying' });
    if (giveUp) m.ack();
    else m.nak(delay);
  }

  private async giveUp(webhook: Webhook, task: DeliveryTask, tries: number, at: number): Promise<void> {
    if (webhook.status !== 'failing') {
      await this.deps.webhooks.put({ ...webhook, status: 'failing', failing_since: at, updated_at: at, version: webhook.version + 1 });
      this.metrics.marked.inc();
    }
    this.deps.log.warn({ webhook: webhook.id, event: task.event.id, attempts: tries }, 'webhook delivery given up; subscription marked failing');
    this.metrics.outcomes.inc({ outcome: 'failed' });
  }
}
