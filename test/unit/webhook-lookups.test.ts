import type { Webhook, WebhookDelivery } from '../../core/webhook';
import { WebhookLookups } from '../../workers/webhooks/webhook-lookups';

const webhook = (over: Partial<Webhook> = {}): Webhook => ({
  org_id: 'org_a',
  id: 'whk_1',
  url: 'https://example.net/hook',
  events: ['incident.opened'],
  description: '',
  secret: 'plain:x',
  status: 'active',
  created_at: 1,
  updated_at: 1,
  failing_since: 0,
  version: 1,
  ...over,
});

/** The repository's part the lookups use, over plain data, counting reads and inserts. */
function fakeRepo(stored: Webhook[]) {
  const rows: WebhookDelivery[][] = [];
  let reads = 0;
  const latest = (id: string) => stored.filter((w) => w.id === id).sort((a, b) => b.version - a.version)[0];
  return {
    rows,
    reads: () => reads,
    stored,
    repo: {
      live: (orgId: string) => {
        reads += 1;
        return Promise.resolve([...new Set(stored.map((w) => w.id))].map(latest).filter((w): w is Webhook => !!w && w.org_id === orgId && w.status !== 'deleted'));
      },
      get: (_orgId: string, id: string) => Promise.resolve(latest(id)),
      put: (w: Webhook) => Promise.resolve(void stored.push(w)),
      recordAttempt: (d: WebhookDelivery) => Promise.resolve(void rows.push([d])),
      recordAttempts: (ds: WebhookDelivery[]) => Promise.resolve(void rows.push(ds)),
    },
  };
}

const delivery = (event_id: string) => ({ event_id }) as WebhookDelivery;

describe('webhook lookups', () => {
  test('a burst of events reads a workspace\'s subscriptions once within the cache time', async () => {
    const f = fakeRepo([webhook()]);
    const lookups = new WebhookLookups(f.repo, { ttlMs: 2_000, now: () => 0 });
    await Promise.all(Array.from({ length: 50 }, () => lookups.live('org_a')));
    expect(f.reads()).toBe(1);
  });

  test('attempts recorded while an insert runs share the next insert, and each caller waits for its own', async () => {
    const f = fakeRepo([]);
    const lookups = new WebhookLookups(f.repo, { ttlMs: 2_000 });
    await Promise.all(['e1', 'e2', 'e3'].map((id) => lookups.recordAttempt(delivery(id))));
    expect(f.rows.map((batch) => batch.map((d) => d.event_id))).toEqual([['e1'], ['e2', 'e3']]);
  });

  test('a status change from a cached copy is applied to the freshest version and keeps a change made meanwhile', async () => {
    const f = fakeRepo([webhook()]);
    const lookups = new WebhookLookups(f.repo, { ttlMs: 60_000, now: () => 0 });
    const cached = (await lookups.get('org_a', 'whk_1'))!;
    f.stored.push(webhook({ url: 'https://example.net/moved', version: 2 })); // a PATCH through the API
    await lookups.put({ ...cached, status: 'failing', failing_since: 5, updated_at: 5, version: cached.version + 1 });
    const written = f.stored[f.stored.length - 1]!;
    expect([written.url, written.status, written.version]).toEqual(['https://example.net/moved', 'failing', 3]);
  });
});
