import { Registry } from 'prom-client';
import { metricTotal } from '../support/metrics';
import { generateFlows, sortedEntries } from '../support/flows';
import { startTestStack, type TestStack } from '../support/test-stack';
import { waitFor, waitForTelemetryDrained } from '../support/wait';
import { streamWorkerOn } from '../support/stream-worker';
import { orgIs, storedCount } from '../support/stored-count';
import { names } from '../../streams/names';

/**
 * chDB's side of a transient failure: the engine in this process runs out of
 * its memory limit (a session setting, lowered to one byte and raised again),
 * answering with MEMORY_LIMIT_EXCEEDED (241) as a server would. The worker
 * retries past maxDeliveries and writes every row once when memory returns.
 */
describe('stream worker write failures on chDB', () => {
  let t: TestStack;
  beforeAll(async () => {
    t = await startTestStack('chdb', { ROLES: 'api' });
  });
  afterAll(async () => {
    await t.stack.clickhouse.exec('SET max_memory_usage = 0').catch(() => undefined);
    await t.stop();
  });

  test('rows chDB cannot take for lack of memory are retried past maxDeliveries and stored once when memory returns', async () => {
    const minted = await t.mintKey({ role: 'operator' });
    const flows = generateFlows(2_000, 500, 41);
    for (const body of flows.batches) expect((await t.request('POST', '/flow', { key: minted.key, raw: body, contentType: 'application/x-ndjson' })).status).toBe(201);
    const ch = t.stack.clickhouse;
    const registry = new Registry();
    const worker = streamWorkerOn(t, { registry, config: { retryDelayMs: 50, maxDeliveries: 2 } });
    await ch.exec('SET max_memory_usage = 1');
    await worker.start();
    try {
      await waitFor(async () => ((await metricTotal(registry, 'nettel_worker_write_failures_total')) >= 4 * 3 ? true : undefined), 30_000, 'repeated failures');
      const failures = (await registry.getSingleMetric('nettel_worker_write_failures_total')!.get()).values;
      expect(new Set(failures.map((v) => `${v.labels.class} ${v.labels.reason}`))).toEqual(new Set(['transient memory_limit']));
      await expect(worker.probe()).rejects.toThrow(/\(memory_limit\)/);
      await ch.exec('SET max_memory_usage = 0');
      await waitForTelemetryDrained(t.stack.nats.jsm, t.stack.config.nats.prefix);
      expect(await storedCount(ch, 'flows', orgIs(minted.org_id))).toBe(flows.total);
      const byDst = await ch.query<{ dst_ip: string; b: string }>(
        `SELECT dst_ip, sum(bytes) AS b FROM ${ch.database}.flows WHERE org_id = '${minted.org_id}' GROUP BY dst_ip`,
      );
      // chDB's columns are IPv6: an IPv4 address reads back mapped.
      expect(sortedEntries(new Map(byDst.map((r) => [r.dst_ip.replace(/^::ffff:/, ''), Number(r.b)])))).toEqual(sortedEntries(flows.bytesByDst));
      expect((await t.stack.nats.jsm.streams.info(names(t.stack.config.nats.prefix).deadLetter)).state.messages).toBe(0);
    } finally {
      await worker.stop();
    }
  });
});
