import { call } from './client';
import { pacedLoop } from './paced';

/**
 * When each destination's flows were first counted in the workspace's stored
 * flows: a top-N by destination over the scenario's range, asked every
 * 2 s (one at a time: a slow answer skips the next asks), each destination
 * stamped with the answer of the first ask that counted it. An upper bound
 * of when its first flows were in ClickHouse, by at most the interval and
 * the query's own time. Asks that failed are counted. Not more often: each
 * ask is the bench's own load on the service's one chDB session (its top-N,
 * the rollup marks it reads and its key: asked every 500 ms, 7.5 % of the
 * session's statement time over a flood run,
 * bench/results/2026-11-30-flood-statements.md).
 */
export function storedProbe(url: string, key: string, from: number, everyMs = 2_000) {
  const seen = new Map<string, number>();
  let asks = 0;
  let failed = 0;
  let asking: Promise<void> | undefined;
  const ask = async () => {
    asks += 1;
    const res = await call<{ data?: Array<{ dst_ip?: string | null }> }>(url, 'GET', `/v1/telemetry/flows/top?by=dst_ip&metric=flows&limit=1000&from=${from}&to=${Date.now() + 60_000}`, key);
    const at = Date.now();
    if (res.status !== 200) failed += 1;
    for (const row of res.body.data ?? []) if (row.dst_ip && !seen.has(row.dst_ip)) seen.set(row.dst_ip, at);
  };
  const loop = pacedLoop(everyMs, () => {
    asking ??= ask()
      .catch(() => void (failed += 1))
      .finally(() => (asking = undefined));
  });
  return {
    seen,
    async stop() {
      await loop.stop();
      await asking;
      return { every_ms: everyMs, asks, failed };
    },
  };
}
