/**
 * Following the collector scenario's counts until they rest: the stored
 * flows, the service's /metrics, and what the collector published.
 */
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** What a rate's wait reads: the flows stored (the analysts' API) and the service's metrics. */
export interface StoredAndMetrics {
  stored: () => Promise<number>;
  metrics: () => Promise<Map<string, number>>;
}

/** Polls `read` until it reaches `target` or rests for `quietMs`; the value, and when it last grew. */
export async function settle(read: () => Promise<number>, o: { target: number; quietMs: number; intervalMs: number; timeoutMs: number }) {
  let value = await read();
  let at = performance.now();
  const deadline = at + o.timeoutMs;
  while (value < o.target && performance.now() - at < o.quietMs && performance.now() < deadline) {
    await sleep(o.intervalMs);
    const v = await read();
    if (v > value) {
      value = v;
      at = performance.now();
    }
  }
  return { value, at };
}

/** Prometheus text as series → value. */
export const samples = (text: string) =>
  new Map(text.split('\n').filter((l) => l && !l.startsWith('#')).map((l) => [l.slice(0, l.lastIndexOf(' ')), Number(l.slice(l.lastIndexOf(' ') + 1))] as const));

export const total = (m: Map<string, number>, name: string, having = '') =>
  [...m].filter(([k]) => (k === name || k.startsWith(`${name}{`)) && k.includes(having)).reduce((n, [, v]) => n + v, 0);

const acceptedName = 'nettel_collector_flows_accepted_total';
/** The collector holds batches JetStream refused and publishes them again (workers/collector/collected-batches.ts): still publishing. */
const retriesName = 'nettel_collector_publish_retries_total';
const pausedName = 'nettel_collector_paused';
/** A stored count resting this long short of what the collector published ends a rate's wait: a loss after acceptance. */
const storedStallMs = 60_000;

/**
 * Follows a rate's flows until they are stored: until the collector's count
 * of flows published to JetStream has rested `quietMs` (or reached what was
 * sent) and the stored count has reached it, or the stored count has rested
 * `storedStallMs` short of it. A collector paused, or publishing again a batch
 * JetStream refused, within `quietMs` is still publishing. A backlog the writers drain after the send is
 * waited for, not counted as lost: a stored count resting a few seconds while
 * the writers work through a large batch once ended the wait early, and the
 * rest of the round was reported lost and counted in the next round's flows.
 */
export async function settleStored(t: StoredAndMetrics, before: { stored: number; metrics: Map<string, number> }, sent: number, quietMs: number) {
  const collector = async () => {
    const m = await t.metrics();
    return { accepted: total(m, acceptedName) - total(before.metrics, acceptedName), held: total(m, pausedName) > 0, retries: total(m, retriesName) };
  };
  const first = await collector();
  const published = { value: first.accepted, at: performance.now(), retries: first.retries };
  const stored = { value: (await t.stored()) - before.stored, at: performance.now() };
  const deadline = performance.now() + 600_000;
  for (;;) {
    const now = performance.now();
    const publishing = published.value < sent && now - published.at < quietMs;
    if (!publishing && (stored.value >= published.value || now - stored.at >= storedStallMs)) break;
    if (now >= deadline) break;
    await sleep(100);
    const [c, s] = [await collector(), (await t.stored()) - before.stored];
    // Growth, a pause or a retry all say the collector still has flows to publish.
    if (c.accepted > published.value || c.held || c.retries > published.retries) Object.assign(published, { value: c.accepted, at: performance.now(), retries: c.retries });
    if (s > stored.value) Object.assign(stored, { value: s, at: performance.now() });
  }
  return { stored, accepted: published.value };
}

