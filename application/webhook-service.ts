import { randomBytes } from 'node:crypto';
import { conflict, notFound, validationError } from '../core/errors';
import { randomId } from '../core/ids';
import { seal, type SealingKeys } from '../core/secret-box';
import type { Webhook, WebhookDelivery } from '../core/webhook';
import { testEvent, type WebhookEventType } from '../core/webhook-events';
import { newSecret } from '../core/webhook-signature';
import type { WebhooksRepo } from '../storage/webhooks-repo';
import type { WebhookDeliveryQueue } from '../streams/webhook-queue';
import type { Registry } from '../observability/metrics';
import type { AuditLedger } from './audit-ledger';
import { RateLimiter } from './rate-limiter';
import { OutboundRefused, checkTarget, type LookupAll } from './outbound-guard';

export interface WebhookInput {
  url: string;
  events: WebhookEventType[];
  description?: string;
}

export type WebhookChange = Partial<WebhookInput>;

export interface WebhookSettings {
  /** Hosts that may be called over http and at internal addresses (WEBHOOK_ALLOWED_HOSTS). */
  allowedHosts: ReadonlySet<string>;
  /** Key material the signing secrets are sealed with at rest (WEBHOOK_SECRETS_KEY); required to create a webhook. */
  secretsKey?: string;
  /** Webhooks a workspace may have, deleted ones aside (WEBHOOK_MAX_PER_WORKSPACE). */
  maxPerWorkspace: number;
  /** Test sends a workspace may ask for a minute (WEBHOOK_TEST_SENDS_PER_MINUTE). */
  testSendsPerMinute: number;
}

/**
 * A workspace's webhook subscriptions: created with a signing secret shown
 * once, changed, deleted (kept as `deleted` for the delivery log), tested.
 * Every URL is checked against the outbound rules, after DNS resolution,
 * when it is set; the deliverer checks it again at every attempt.
 */
export class WebhookService {
  constructor(
    private readonly deps: {
      webhooks: WebhooksRepo;
      queue: WebhookDeliveryQueue;
      audit: AuditLedger;
      settings: WebhookSettings;
      registry: Registry;
      lookup?: LookupAll;
      now?: () => number;
    },
  ) {
    const perMinute = deps.settings.testSendsPerMinute;
    this.testSends = new RateLimiter(
      { ratePerSecond: perMinute / 60, capacity: perMinute },
      {
        metric: { name: 'nettel_webhook_test_sends_refused_total', help: 'Webhook test sends refused with 429 because their workspace asked for too many a minute' },
        refusal: () => `the workspace asked for more than ${perMinute} webhook test sends a minute`,
      },
      deps.registry,
      deps.now,
    );
  }

  private readonly testSends: RateLimiter;

  private now(): number {
    return (this.deps.now ?? Date.now)();
  }

  private async checkUrl(url: string): Promise<void> {
    try {
      await checkTarget(url, this.deps.settings.allowedHosts, this.deps.lookup);
    } catch (err) {
      if (err instanceof OutboundRefused) throw validationError('invalid webhook', [{ path: 'url', message: err.message }]);
      throw err;
    }
  }

  private sealingKeys(): SealingKeys {
    const current = this.deps.settings.secretsKey;
    // main.ts generates one on the embedded default and loadConfig requires one otherwise: its absence is a wiring fault.
    if (!current) throw new Error('webhook signing secrets need WEBHOOK_SECRETS_KEY to be sealed');
    return { current };
  }

  async create(orgId: string, actor: string, input: WebhookInput): Promise<{ webhook: Webhook; secret: string }> {
    await this.checkUrl(input.url);
    const max = this.deps.settings.maxPerWorkspace;
    // Deleted subscriptions stay for their delivery log; a workspace with many has at most this many more to read.
    const held = (await this.deps.webhooks.list(orgId, { limit: 10_000 })).filter((w) => w.status !== 'deleted').length;
    if (held >= max) throw conflict(`the workspace has ${held} webhooks, the most it may have (${max}): delete one first`);
    const now = this.now();
    const secret = newSecret();
    const id = randomId('whk');
    const webhook: Webhook = {
      org_id: orgId,
      id,
      url: input.url,
      events: [...new Set(input.events)],
      description: input.description ?? '',
      secret: seal(secret, this.sealingKeys(), { orgId, id }),
      status: 'active',
      created_at: now,
      updated_at: now,
      failing_since: 0,
      version: 1,
    };
    await this.deps.webhooks.put(webhook);
    await this.deps.audit.append({ orgId, actor, action: 'webhook.create', target: webhook.id, details: { url: input.url, events: webhook.events } });
    return { webhook, secret };
  }

  async get(orgId: string, id: string): Promise<Webhook> {
    const webhook = await this.deps.webhooks.get(orgId, id);
    if (!webhook) throw notFound('webhook');
    return webhook;
  }

  list(orgId: string, opts: { status?: Webhook['status']; limit: number; after?: { created_at: number; id: string } }): Promise<Webhook[]> {
    return this.deps.webhooks.list(orgId, opts);
  }

  /** Any change also makes a failing subscription active: its owner has looked at it. */
  async update(orgId: string, actor: string, id: string, change: WebhookChange): Promise<Webhook> {
    const webhook = await this.live(orgId, id, 'a deleted webhook cannot be changed');
    if (change.url !== undefined) await this.checkUrl(change.url);
    const updated: Webhook = {
      ...webhook,
      url: change.url ?? webhook.url,
      events: change.events ? [...new Set(change.events)] : webhook.events,
      description: change.description ?? webhook.description,
      status: 'active',
      failing_since: 0,
      updated_at: this.now(),
      version: webhook.version + 1,
    };
    await this.deps.webhooks.put(updated);
    await this.deps.audit.append({ orgId, actor, action: 'webhook.update', target: id, details: { ...change } });
    return updated;
  }

  async delete(orgId: string, actor: string, id: string): Promise<Webhook> {
    const webhook = await this.live(orgId, id, 'the webhook is already deleted');
    const deleted: Webhook = { ...webhook, status: 'deleted', updated_at: this.now(), version: webhook.version + 1 };
    await this.deps.webhooks.put(deleted);
    await this.deps.audit.append({ orgId, actor, action: 'webhook.delete', target: id, details: { url: webhook.url } });
    return deleted;
  }

  /** Queues a `webhook.test` event for this subscription alone; it is delivered and logged like any other. */
  async test(orgId: string, id: string): Promise<{ event_id: string }> {
    const webhook = await this.live(orgId, id, 'a deleted webhook cannot be tested');
    this.testSends.take(orgId, 1);
    const event = testEvent(orgId, webhook.id, randomBytes(8).toString('hex'), this.now());
    await this.deps.queue.queue({ webhook_id: webhook.id, event });
    return { event_id: event.id };
  }

  async deliveries(orgId: string, id: string, opts: { limit: number; after?: { first_attempt_at: number; event_id: string } }): Promise<WebhookDelivery[]> {
    await this.get(orgId, id);
    return this.deps.webhooks.deliveries(orgId, id, opts);
  }

  private async live(orgId: string, id: string, deletedMessage: string): Promise<Webhook> {
    const webhook = await this.get(orgId, id);
    if (webhook.status === 'deleted') throw conflict(deletedMessage);
    return webhook;
  }
}
