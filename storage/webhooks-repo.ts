import type { Webhook, WebhookDelivery } from '../core/webhook';
import type { WebhookEventType } from '../core/webhook-events';
import type { ClickHouse } from './clickhouse';
import { int, str } from './sql';

const columns = 'org_id, id, url, events, description, secret, status, created_at, updated_at, failing_since, version';
const deliveryColumns = `org_id, webhook_id, event_id, event_type, status, attempts, response_code, latency_ms, error,
  first_attempt_at, last_attempt_at, next_attempt_at`;

function fromRow(r: Record<string, unknown>): Webhook {
  return {
    org_id: String(r.org_id),
    id: String(r.id),
    url: String(r.url),
    events: JSON.parse(String(r.events)) as WebhookEventType[],
    description: String(r.description),
    secret: String(r.secret),
    status: r.status as Webhook['status'],
    created_at: Number(r.created_at),
    updated_at: Number(r.updated_at),
    failing_since: Number(r.failing_since),
    version: Number(r.version),
  };
}

function deliveryFromRow(r: Record<string, unknown>): WebhookDelivery {
  return {
    org_id: String(r.org_id),
    webhook_id: String(r.webhook_id),
    event_id: String(r.event_id),
    event_type: String(r.event_type),
    status: r.status as WebhookDelivery['status'],
    attempts: Number(r.attempts),
    response_code: Number(r.response_code),
    latency_ms: Number(r.latency_ms),
    error: String(r.error),
    first_attempt_at: Number(r.first_attempt_at),
    last_attempt_at: Number(r.last_attempt_at),
    next_attempt_at: Number(r.next_attempt_at),
  };
}

/** Webhook subscriptions as versioned rows, and their delivery log (one row per attempt, the latest wins). */
export class WebhooksRepo {
  constructor(private readonly ch: ClickHouse) {}

  async put(w: Webhook): Promise<void> {
    await this.ch.insertJsonEachRow('webhooks', JSON.stringify({ ...w, events: JSON.stringify(w.events) }) + '\n');
  }

  async get(orgId: string, id: string): Promise<Webhook | undefined> {
    const rows = await this.ch.query(`SELECT ${columns} FROM ${this.ch.database}.webhooks FINAL WHERE org_id = ${str(orgId)} AND id = ${str(id)}`);
    return rows[0] ? fromRow(rows[0]) : undefined;
  }

  /** The subscriptions of a workspace that are not deleted. */
  async live(orgId: string): Promise<Webhook[]> {
    const rows = await this.ch.query(
      `SELECT * FROM (SELECT ${columns} FROM ${this.ch.database}.webhooks FINAL WHERE org_id = ${str(orgId)}) WHERE status != 'deleted'`,
    );
    return rows.map(fromRow);
  }

  async list(orgId: string, opts: { status?: Webhook['status']; limit: number; after?: { created_at: number; id: string } }): Promise<Webhook[]> {
    const where: string[] = [];
    if (opts.status) where.push(`status = ${str(opts.status)}`);
    if (opts.after) {
      where.push(`(created_at < ${int(opts.after.created_at)} OR (created_at = ${int(opts.after.created_at)} AND id < ${str(opts.after.id)}))`);
    }
    const rows = await this.ch.query(
      `SELECT * FROM (SELECT ${columns} FROM ${this.ch.database}.webhooks FINAL WHERE org_id = ${str(orgId)})
       ${where.length ? 'WHERE ' + where.join(' AND ') : ''} ORDER BY created_at DESC, id DESC LIMIT ${int(opts.limit)}`,
    );
    return rows.map(fromRow);
  }

  async recordAttempt(d: WebhookDelivery): Promise<void> {
    await this.recordAttempts([d]);
  }

  /** Several attempts' rows in one insert. */
  async recordAttempts(rows: WebhookDelivery[]): Promise<void> {
    if (rows.length === 0) return;
    await this.ch.insertJsonEachRow('webhook_deliveries', rows.map((d) => JSON.stringify(d)).join('\n') + '\n');
  }

  /** A subscription's deliveries, the latest attempt of each, newest first attempt first. */
  async deliveries(orgId: string, webhookId: string, opts: { limit: number; after?: { first_attempt_at: number; event_id: string } }): Promise<WebhookDelivery[]> {
    const after = opts.after
      ? `WHERE (first_attempt_at < ${int(opts.after.first_attempt_at)} OR (first_attempt_at = ${int(opts.after.first_attempt_at)} AND event_id < ${str(opts.after.event_id)}))`
      : '';
    const rows = await this.ch.query(
      `SELECT * FROM (SELECT ${deliveryColumns} FROM ${this.ch.database}.webhook_deliveries FINAL
         WHERE org_id = ${str(orgId)} AND webhook_id = ${str(webhookId)})
       ${after} ORDER BY first_attempt_at DESC, event_id DESC LIMIT ${int(opts.limit)}`,
    );
    return rows.map(deliveryFromRow);
  }
}
