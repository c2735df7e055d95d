import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { headers as natsHeaders, type JsMsg } from 'nats';
import { telemetryHeaderEntries, telemetryHeaderNames } from '../../core/telemetry-headers';
import { metricTotal } from '../support/metrics';
import { generateFlows, sortedEntries } from '../support/flows';
import { startWorkerProcess as startWorker } from '../support/worker-process';
import { startTestStack, type TestStack } from '../support/test-stack';
import { waitFor, waitForTelemetryDrained } from '../support/wait';
import { streamWorkerOn } from '../support/stream-worker';
import { orgIs, storedCount } from '../support/stored-count';
import { names } from '../../streams/names';

/**
 * The stream workers run apart from the API here (ROLES=api for the test
 * stack), on the ClickHouse server: a worker process is killed and started
 * again, and the sums in ClickHouse stay exact.
 */

async function postAll(t: TestStack, key: string, batches: string[]) {
  for (const body of batches) {
    const res = await t.request('POST', '/flow', { key, raw: body, contentType: 'application/x-ndjson' });
    expect(res.status).toBe(201);
  }
}

const flowsStored = (t: TestStack, orgId: string) => storedCount(t.stack.clickhouse, 'flows', orgIs(orgId));

async function bytesByDst(t: TestStack, orgId: string): Promise<Map<string, number>> {
  const rows = await t.stack.clickhouse.query<{ dst_ip: string; b: string }>(
    `SELECT dst_ip, sum(bytes) AS b FROM ${t.stack.clickhouse.database}.flows WHERE org_id = '${orgId}' GROUP BY dst_ip`,
  );
  return new Map(rows.map((r) => [r.dst_ip, Number(r.b)]));
}

describe('stream worker crashes', () => {
  let t: TestStack;
  let workerDir: string;
  beforeAll(async () => {
    t = await startTestStack('clickhouse-server', { ROLES: 'api', NATS_ACK_WAIT_MS: '3000' });
    workerDir = fs.mkdtempSync(path.join(os.tmpdir(), 'nettel-worker-'));
  });
  afterAll(async () => {
    await t.stop();
    fs.rmSync(workerDir, { recursive: true, force: true });
  });

  const startWorkerProcess = () => startWorker(t.stack.config, workerDir, { NATS_ACK_WAIT_MS: '3000', WORKER_MAX_MESSAGES: '2' });

  test('a worker killed in the middle of the work and started again leaves the sums exact', async () => {
    const minted = await t.mintKey({ role: 'operator' });
    const flows = generateFlows(100_000, 5_000, 7);
    await postAll(t, minted.key, flows.batches);

    const first = startWorkerProcess();
    const partial = await waitFor(async () => {
      const n = await flowsStored(t, minted.org_id);
      return n > 0 ? n : undefined;
    }, 60_000, 'the first rows');
    first.child.kill('SIGKILL');
    await first.exited;
    expect(partial).toBeLessThan(flows.total);

    const second = startWorkerProcess();
    try {
      await waitFor(async () => ((await flowsStored(t, minted.org_id)) >= flows.total ? true : undefined), 90_000, 'every flow');
      // Messages the killed worker held come back after the ack wait: count once every message is acknowledged.
      await waitForTelemetryDrained(t.stack.nats.jsm, t.stack.config.nats.prefix, 90_000);
      expect(await flowsStored(t, minted.org_id)).toBe(flows.total);
      expect(sortedEntries(await bytesByDst(t, minted.org_id))).toEqual(sortedEntries(flows.bytesByDst));
    } finally {
      second.child.kill('SIGTERM');
      await second.exited;
    }
  });

  test('messages written but never acknowledged are redelivered and not written twice', async () => {
    const minted = await t.mintKey({ role: 'operator' });
    // One message of 20,000 flows and four of 5,000: the large one's duplicate check spans several queries.
    const large = generateFlows(20_000, 20_000, 13);
    await postAll(t, minted.key, large.batches);
    const flows = generateFlows(20_000, 5_000, 11);
    await postAll(t, minted.key, flows.batches);
    const stack = t.stack;
    const worker = streamWorkerOn(t);

    // The crash: a batch is written to ClickHouse, then the worker dies before its ack.
    const n = names(stack.config.nats.prefix);
    const consumer = await stack.nats.js().consumers.get(n.stream, n.writers);
    const taken: JsMsg[] = [];
    for await (const m of await consumer.fetch({ max_messages: 2, expires: 2000 })) taken.push(m);
    expect(taken).toHaveLength(2);
    await worker.process(taken);
    expect(await flowsStored(t, minted.org_id)).toBe(25_000);
    for (const m of taken) m.nak();

    const skippedBefore = (await metricTotal(stack.registry, 'nettel_worker_duplicate_rows_skipped_total'));
    await worker.start();
    try {
      const total = large.total + flows.total;
      await waitFor(async () => ((await flowsStored(t, minted.org_id)) >= total ? true : undefined), 60_000, 'every flow');
      // The redelivered messages are written (or skipped) before their ack: count once none is left unacknowledged.
      await waitForTelemetryDrained(t.stack.nats.jsm, t.stack.config.nats.prefix);
      expect(await flowsStored(t, minted.org_id)).toBe(total);
      const expected = new Map(flows.bytesByDst);
      for (const [dst, b] of large.bytesByDst) expected.set(dst, (expected.get(dst) ?? 0) + b);
      expect(sortedEntries(await bytesByDst(t, minted.org_id))).toEqual(sortedEntries(expected));
      // At least the 25,000 rows written before the crash are found and skipped; on a loaded machine a batch whose
      // ack wait passed while it was written is redelivered and skipped too (stored once all the same, checked above).
      const skipped = (await metricTotal(stack.registry, 'nettel_worker_duplicate_rows_skipped_total')) - skippedBefore;
      expect(skipped).toBeGreaterThanOrEqual(25_000);
    } finally {
      await worker.stop();
    }
  });

  test('a message ClickHouse keeps refusing goes to the dead-letter stream and the rest of its batch is written', async () => {
    const minted = await t.mintKey({ role: 'operator' });
    const good = generateFlows(1_000, 1_000, 17);
    await postAll(t, minted.key, good.batches);
    const stack = t.stack;
    const n = names(stack.config.nats.prefix);
    // A message the API would never publish: a row of the shape the row screen lets through, with values its columns refuse.
    const h = natsHeaders();
    for (const [name, value] of telemetryHeaderEntries({ kind: 'flow', orgId: minted.org_id, count: 1, minTs: 0, maxTs: 0 })) h.set(name, value);
    await stack.nats.js().publish(n.subject('flow', minted.org_id), Buffer.from(`{"org_id":"${minted.org_id}","ts":1.5,"bytes":-1}\n`), { headers: h });

    const worker = streamWorkerOn(t, { config: { retryDelayMs: 20, maxDeliveries: 2 } });
    await worker.start();
    try {
      await waitFor(async () => {
        const info = await stack.nats.jsm.streams.info(n.deadLetter);
        return info.state.messages === 1 ? true : undefined;
      }, 30_000, 'the dead letter');
      expect(await flowsStored(t, minted.org_id)).toBe(good.total);
      const dead = await stack.nats.jsm.streams.getMessage(n.deadLetter, { seq: (await stack.nats.jsm.streams.info(n.deadLetter)).state.first_seq });
      expect(dead.header.get(telemetryHeaderNames.error)).toMatch(/clickhouse insert into flows failed/);
      expect((await stack.nats.jsm.streams.info(n.stream)).state.messages).toBe(0);
    } finally {
      await worker.stop();
    }
  });
});

