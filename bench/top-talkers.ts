import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { migrate } from '../storage/migrations';
import { createLogger } from '../observability/logger';
import { mintKey, storedFlows, timedGet } from './client';
import { percentile } from './data';
import { seedFlows, type SeedPlan } from './seed-flows';
import type { Sizes } from './scenarios';
import { chdbFolderOf, type BenchStack } from './stack';
import { serviceStore, type ClickHouseSettings } from './storage-scenarios';

/**
 * Top talkers over a month of history: `sizes.topFlows` flows over 30 days
 * are seeded straight into a fresh service data folder (or a fresh database
 * of the ClickHouse server) before a service starts on it, then
 * `GET /v1/telemetry/flows/top` by source and by destination over the last
 * hour, day and 30 days of that history, timed from the bench; beside them
 * top-N by destination AS and by source country (issue 33), which the
 * dimension rollups answer, a top-N filtered in the analysts' language and a
 * sankey of three dimensions (issue 34).
 */
const hour = 3_600_000;
const day = 24 * hour;
export const topRanges = { '1h': hour, '1d': day, '30d': 30 * day } as const;
type RangeName = keyof typeof topRanges;
/** Top talkers (the targets' keys), then the analysts' queries timed beside them, each by its name and its parameters. */
const talkers = ['src_ip', 'dst_ip'] as const;
const analystDimensions = ['dst_as', 'src_country'] as const;
/** A filter on the dimension rollups' keys (the seed's destination ASes and source countries), and a sankey of source AS, input interface name (joined in when read) and destination network. */
const filtered = 'filtered';
const sankey = 'sankey';
const queries: Record<string, string> = {
  ...Object.fromEntries([...talkers, ...analystDimensions].map((by) => [by, `by=${by}`])),
  [filtered]: `by=src_as&filter=${encodeURIComponent("dst_as IN (64500, 64501) AND NOT src_country IN ('NL', 'DE') AND protocol != 'icmp'")}`,
  [sankey]: 'by=src_as,in_if_name,dst_net_name',
};

/** Each range and dimension is called up to `runs` times, but stops after this long (after at least 5 calls). */
const budgetMs = 60_000;

async function timedCalls(url: string, key: string, route: string, runs: number): Promise<number[]> {
  const samples: number[] = [];
  const started = performance.now();
  while (samples.length < runs && (samples.length < 5 || performance.now() - started < budgetMs)) {
    samples.push(await timedGet(url, route, key));
  }
  return samples;
}

/** p50 and p99 per dimension over each range ending at `to`; one untimed call of each first. */
async function measureRanges(url: string, key: string, to: number, runs: number) {
  const out = {} as Record<RangeName, Record<string, { p50_ms: number; p99_ms: number; calls: number }>>;
  for (const [name, span] of Object.entries(topRanges) as Array<[RangeName, number]>) {
    out[name] = {};
    for (const [query, params] of Object.entries(queries)) {
      const route = `/v1/telemetry/flows/top?${params}&metric=bytes&limit=10&from=${to - span}&to=${to}`;
      await timedCalls(url, key, route, 1);
      const samples = await timedCalls(url, key, route, runs);
      out[name][query] = { p50_ms: percentile(samples, 50), p99_ms: percentile(samples, 99), calls: samples.length };
    }
  }
  return out;
}

/** Scenario: seeds the history, starts a service on it, and times top-N; the slower talker's p99 per range, and the slower analyst dimension's. */
export async function topTalkersOverSeededFlows(stack: BenchStack, settings: ClickHouseSettings, sizes: Sizes, log: (msg: string) => void) {
  const id = randomBytes(4).toString('hex');
  const dataDir = path.join(stack.dir, 'top-service');
  const database = `bench_top_${id}`;
  const to = Date.now();
  // The oldest flow is an hour inside the raw retention, so no TTL merge drops any during the run.
  const plan: SeedPlan = { flows: sizes.topFlows, orgId: `org_bench_top_${id}`, from: to - 30 * day + hour, to };
  const store = serviceStore(settings, chdbFolderOf(dataDir), database);
  await store.start();
  let seed: Awaited<ReturnType<typeof seedFlows>>;
  try {
    if (store.dialect.generation === 'legacy') throw new Error('the top-talkers seed is written for current ClickHouse, not 18.16');
    await migrate(store, { retention: settings.retention, log: createLogger('silent') });
    seed = await seedFlows(store, plan, sizes.topFlows >= 10_000_000 ? 300_000 : 30_000, log);
  } finally {
    await store.stop();
  }
  log(`seeded ${plan.flows} flows in ${seed.insert_s} s (${seed.rows_per_s} rows/s), merges settled in ${seed.settle_s} s; starting a service on them`);
  const service = await stack.launch({ dataDir, database });
  try {
    const key = await mintKey(service.url, stack.adminKey, { org_id: plan.orgId });
    const visible = await storedFlows(service.url, key.key, to - 30 * day, to + 1);
    if (visible !== plan.flows) throw new Error(`the API counts ${visible} of the ${plan.flows} seeded flows`);
    const ranges = await measureRanges(service.url, key.key, to, sizes.queryRuns);
    const p99 = (name: RangeName, of: readonly string[]) => Math.max(...of.map((by) => ranges[name][by]!.p99_ms));
    const perRange = (of: readonly string[]) => ({ '1h': p99('1h', of), '1d': p99('1d', of), '30d': p99('30d', of) });
    return { p99_ms: perRange(talkers), dimensions_p99_ms: perRange(analystDimensions), filtered_p99_ms: perRange([filtered]), sankey_p99_ms: perRange([sankey]), ranges, seed };
  } finally {
    await service.stop();
    if (settings.url) await dropDatabase(settings, database);
  }
}

/** On a ClickHouse server the seeded database would outlive the run: it goes when the scenario ends. */
async function dropDatabase(settings: ClickHouseSettings, database: string): Promise<void> {
  const store = serviceStore(settings, '', database);
  await store.start();
  await store.exec(`DROP DATABASE IF EXISTS ${database}`);
  await store.stop();
}
