import { randomBytes } from 'node:crypto';
import { limitsSettings } from '../../api/limits.config';
import { QueryBudget } from '../../application/query-budget';
import { planFlowQuery } from '../../core/flow-query';
import { flowQueryCost, queryCost } from '../../core/query-cost';
import { defaultsOf } from '../../core/settings';
import { createLogger } from '../../observability/logger';
import { createRegistry } from '../../observability/metrics';
import { NatsClient } from '../../streams/nats-client';
import { names } from '../../streams/names';
import { QueryBudgetBucket } from '../../streams/query-budget-bucket';

/**
 * The default query budget against the console's own use, on the real
 * NATS key-value bucket every API process shares, with the budget's clock
 * injected so ten minutes of refreshes take a second: three analysts of one
 * workspace on a visualize page refreshed every 5 s never meet a 429, and a
 * client asking as fast as it can gets no more than the budget's rate.
 */
const second = 1000;
const hour = 3_600_000;
const log = createLogger('silent');

/**
 * The visualize page's reads (issue 34) over the last hour, every one on the
 * raw flows (its filter names an AS, which no rollup keeps today): a series
 * split by interface and a top-N, both with the previous period, a sankey of
 * three dimensions, and the flows list.
 */
function pageCosts(range: { from: number; to: number }): number[] {
  const raw = (dims: Parameters<typeof planFlowQuery>[0]) => planFlowQuery(dims, [], { dimensions: ['src_as'], tables: ['raw'] }).source;
  return [
    flowQueryCost(raw(['in_if_name']), range, true),
    flowQueryCost(raw(['dst_port']), range, true),
    flowQueryCost(raw(['src_as', 'in_if_name', 'dst_as']), range),
    queryCost('raw', range),
  ];
}

describe('the default query budget against the visualize page', () => {
  const prefix = `qb${randomBytes(4).toString('hex')}`;
  const nats = new NatsClient({ url: process.env.TEST_NATS_URL!, name: 'query-budget-test' }, log);
  const config = defaultsOf(limitsSettings).queryBudget;
  let clock = Date.now();
  let bucket: QueryBudgetBucket;
  let budget: QueryBudget;

  beforeAll(async () => {
    await nats.start();
    bucket = new QueryBudgetBucket({ nats, prefix, replicas: 1, budget: { ratePerSecond: config.unitsPerMinute / 60, capacity: config.burstUnits } });
    await bucket.start();
    budget = new QueryBudget({ config, bucket, registry: createRegistry(), now: () => clock });
  });
  afterAll(async () => {
    await bucket.stop();
    await nats.jsm.streams.delete(`KV_${names(prefix).queryBudgetBucket}`).catch(() => undefined);
    await nats.stop();
  });

  /** Takes a read's cost; true when refused with 429. */
  const refused = (owner: string, cost: number) =>
    budget.take(owner, cost).then(
      () => false,
      (err: { code?: string }) => {
        if (err.code !== 'RATE_LIMITED') throw err;
        return true;
      },
    );

  test('the defaults are 600 units a minute and 300 at once', () => {
    expect(config).toEqual({ unitsPerMinute: 600, burstUnits: 300 });
  });

  test('three analysts of one workspace refreshing the page every 5 s for ten minutes never meet a 429', async () => {
    const owner = `w.pages-${randomBytes(3).toString('hex')}`;
    let refusals = 0;
    let reads = 0;
    // Each analyst's refresh lands at its own second of the 5 s period.
    for (let at = 0; at < 10 * 60 * second; at += 5 * second) {
      for (const offset of [0, 1, 3]) {
        clock = Date.now() + at + offset * second;
        const range = { from: clock - hour, to: clock };
        for (const cost of pageCosts(range)) {
          reads += 1;
          if (await refused(owner, cost)) refusals += 1;
        }
      }
    }
    expect(reads).toBe(120 * 3 * 4);
    expect(refusals).toBe(0);
  });

  test('a client asking as fast as it can is held to the budget: its burst, then the rate a minute', async () => {
    const owner = `w.abuse-${randomBytes(3).toString('hex')}`;
    const start = Date.now() + 3_600_000;
    let spent = 0;
    // A day-long raw top-N (5 units) every 100 ms for five minutes.
    for (let at = 0; at < 5 * 60 * second; at += 100) {
      clock = start + at;
      const cost = queryCost('raw', { from: clock - 24 * hour, to: clock });
      if (!(await refused(owner, cost))) spent += cost;
    }
    expect(spent).toBeLessThanOrEqual(config.burstUnits + 5 * config.unitsPerMinute);
    expect(spent).toBeGreaterThan(5 * config.unitsPerMinute);
  });

  test("one workspace's spending leaves another's budget whole", async () => {
    const spender = `w.spender-${randomBytes(3).toString('hex')}`;
    clock = Date.now() + 2 * 3_600_000;
    while (!(await refused(spender, 29)));
    expect(await refused(`w.other-${randomBytes(3).toString('hex')}`, 29)).toBe(false);
  });
});
