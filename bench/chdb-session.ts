import { samples, total } from './settle';
import type { BenchStack } from './stack';

/** The service's /metrics, read with the platform admin key. */
async function readMetrics(stack: BenchStack): Promise<Map<string, number>> {
  const res = await fetch(`${stack.url}/metrics`, { headers: { authorization: `Bearer ${stack.adminKey}` } });
  if (res.status !== 200) throw new Error(`the service's /metrics answered ${res.status}`);
  return samples(await res.text());
}

const ran = 'nettel_chdb_statement_seconds';
const waited = 'nettel_chdb_statement_wait_seconds';

/**
 * What the one chDB session did between `start()` and `stop()`: the share of
 * the wall time it ran statements (1: never idle, the run is past
 * saturation), and by class how many statements and their mean wait for
 * their turn. Null on a ClickHouse server (no session to share).
 */
export async function chdbSessionUse(stack: BenchStack) {
  const before = await readMetrics(stack);
  const startedAt = performance.now();
  return {
    async stop() {
      const after = await readMetrics(stack);
      const delta = (name: string, having = '') => total(after, name, having) - total(before, name, having);
      const statements = delta(`${ran}_count`);
      if (statements === 0 && total(after, `${ran}_count`) === 0) return null;
      const wall = (performance.now() - startedAt) / 1000;
      const ofClass = (c: string) => {
        const n = delta(`${waited}_count`, `class="${c}"`);
        return { statements: n, mean_wait_ms: n ? Math.round((delta(`${waited}_sum`, `class="${c}"`) / n) * 1000) : null, mean_run_ms: n ? Math.round((delta(`${ran}_sum`, `class="${c}"`) / n) * 1000) : null };
      };
      return { busy_share: Math.round((delta(`${ran}_sum`) / wall) * 100) / 100, seconds: Math.round(wall), interactive: ofClass('interactive'), bulk: ofClass('bulk') };
    },
  };
}
