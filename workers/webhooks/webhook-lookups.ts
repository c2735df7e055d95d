import type { Webhook, WebhookDelivery } from '../../core/webhook';
import type { WebhooksRepo } from '../../storage/webhooks-repo';

type Repo = Pick<WebhooksRepo, 'live' | 'get' | 'put' | 'recordAttempt' | 'recordAttempts'>;

/**
 * What the fan-out and the deliverer read and write of ClickHouse, shaped
 * for a burst of events. Without it every event cost a subscription query
 * and every attempt a lookup and a one-row insert; on chDB, which runs one
 * statement at a time in the process, those queued behind the stream
 * workers' inserts and held them back in turn (incident latency under the
 * bench's load went from about 2 s to about 9 s with one subscription).
 *
 * - Subscriptions are cached for `ttlMs` per workspace: a new, changed or
 *   deleted subscription is seen within that time (a write through this
 *   object is seen at once).
 * - Delivery log rows are written together: an attempt's row joins the next
 *   insert (group commit), and its caller still resolves only once that
 *   insert is done, so a row is never reported written before it is.
 */
export class WebhookLookups implements Pick<WebhooksRepo, 'live' | 'get' | 'put' | 'recordAttempt'> {
  private readonly live$ = new Map<string, { at: number; value: Promise<Webhook[]> }>();
  private pending: Array<{ row: WebhookDelivery; resolve: () => void; reject: (err: unknown) => void }> = [];
  private flushing = false;

  constructor(
    private readonly repo: Repo,
    private readonly config: { ttlMs: number; now?: () => number },
  ) {}

  private now(): number {
    return (this.config.now ?? Date.now)();
  }

  live(orgId: string): Promise<Webhook[]> {
    const cached = this.live$.get(orgId);
    if (cached && this.now() - cached.at < this.config.ttlMs) return cached.value;
    const value = this.repo.live(orgId);
    this.live$.set(orgId, { at: this.now(), value });
    // A failed read is not kept: the next event reads again.
    value.catch(() => this.live$.delete(orgId));
    return value;
  }

  async get(orgId: string, id: string): Promise<Webhook | undefined> {
    return (await this.live(orgId)).find((w) => w.id === id) ?? this.repo.get(orgId, id);
  }

  /**
   * The deliverer writes status changes only (failing, active again): they
   * are applied to the freshest stored version, so a subscription changed
   * through the API meanwhile keeps its change (a cached copy never
   * overwrites it).
   */
  async put(webhook: Webhook): Promise<void> {
    const fresh = (await this.repo.get(webhook.org_id, webhook.id)) ?? webhook;
    if (fresh.status === 'deleted') return;
    const { status, failing_since, updated_at } = webhook;
    await this.repo.put({ ...fresh, status, failing_since, updated_at, version: Math.max(fresh.version, webhook.version - 1) + 1 });
    this.live$.delete(webhook.org_id);
  }

  recordAttempt(row: WebhookDelivery): Promise<void> {
    const written = new Promise<void>((resolve, reject) => this.pending.push({ row, resolve, reject }));
    if (!this.flushing) void this.flush();
    return written;
  }

  /** One insert for every row waiting; rows arriving meanwhile wait for the next. */
  private async flush(): Promise<void> {
    this.flushing = true;
    while (this.pending.length > 0) {
      const batch = this.pending;
      this.pending = [];
      try {
        await this.repo.recordAttempts(batch.map((p) => p.row));
        batch.forEach((p) => p.resolve());
      } catch (err) {
        batch.forEach((p) => p.reject(err));
      }
    }
    this.flushing = false;
  }
}
