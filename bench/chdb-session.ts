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
 * What chDB's sessions did between `start()` and `stop()`, by lane (the
 * writes' session; the reads' sessions together): the share of the wall time
 * they ran statements (the writes' 1: never idle; the reads' up to their
 * number), and by class how many statements and their mean wait for their
 * turn and run. Null on a ClickHouse server (no sessions of the service's).
 */
export async function chdbSessionUse(stack: BenchStack) {
  const before = await readMetrics(stack);
  const startedAt = performance.now();
  return {
    async stop() {
      const after = await readMetrics(stack);
      if (total(after, `${ran}_count`) === 0) return null;
      const delta = (name: string, ...having: string[]) => {
        const of = (m: Map<string, number>) => [...m].filter(([k]) => k.startsWith(`${name}{`) && having.every((h) => k.includes(h))).reduce((n, [, v]) => n + v, 0);
        return of(after) - of(before);
      };
      const wall = (performance.now() - startedAt) / 1000;
      const ms = (sum: number, n: number) => (n ? Math.round((sum / n) * 1000) : null);
      const ofLane = (lane: string) => {
        const l = `lane="${lane}"`;
        const ofClass = (c: string) => {
          const k = `class="${c}"`;
          const n = delta(`${waited}_count`, l, k);
          return { statements: n, mean_wait_ms: ms(delta(`${waited}_sum`, l, k), n), mean_run_ms: ms(delta(`${ran}_sum`, l, k), n) };
        };
        return { busy_share: Math.round((delta(`${ran}_sum`, l) / wall) * 100) / 100, interactive: ofClass('interactive'), bulk: ofClass('bulk') };
      };
      return { seconds: Math.round(wall), writes: ofLane('writes'), reads: ofLane('reads') };
    },
  };
}
