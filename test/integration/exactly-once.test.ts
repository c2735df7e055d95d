import type { JsMsg } from 'nats';
import { ensureTopology } from '../../streams/topology';
import { StreamWorker } from '../../workers/telemetry/stream-worker';
import { generateFlows, type GeneratedFlows } from '../support/flows';
import { startTestStack, transports, type TestStack } from '../support/test-stack';
import { waitForTelemetryDrained } from '../support/wait';
import { streamWorkerOn } from '../support/stream-worker';
import { names } from '../../streams/names';
import { RollupFold } from '../../storage/rollup-fold';

/**
 * Each accepted record is stored once in the raw flows and counted once in
 * every rollup, whichever way it comes twice: a message redelivered after a
 * worker wrote it and died before its ack, or a client's retry with the same
 * Idempotency-Key that JetStream no longer recognizes as a duplicate. The
 * stream workers run apart from the API (ROLES=api): each test drives its own.
 */
const tables = ['flows', 'flows_1m', 'flows_5m', 'flows_1h', 'flows_src_1m', 'flows_src_5m', 'flows_src_1h'];

interface Totals {
  records: number;
  distinctIds?: number;
  bytes: number;
  packets: number;
}

const totalPackets = (flows: GeneratedFlows) => [...flows.packetsBySrc.values()].reduce((a, b) => a + b, 0);

describe.each(transports)('exactly once on %s', (transport) => {
  let t: TestStack;
  beforeAll(async () => {
    t = await startTestStack(transport, { ROLES: 'api' });
  });
  afterAll(async () => {
    await t.stop();
  });

  function newWorker(): StreamWorker {
    return streamWorkerOn(t);
  }

  /** Runs a fresh worker until the stream is drained: everything published so far is written and acknowledged. */
  async function drainWithNewWorker(): Promise<void> {
    const worker = newWorker();
    await worker.start();
    try {
      await waitForTelemetryDrained(t.stack.nats.jsm, t.stack.config.nats.prefix);
    } finally {
      await worker.stop();
    }
  }

  async function post(key: string, body: string, headers: Record<string, string> = {}): Promise<void> {
    const res = await t.request('POST', '/flow', { key, raw: body, contentType: 'application/x-ndjson', headers });
    expect(res.status).toBe(201);
  }

  /** Records (raw rows, or flows counted in a rollup), bytes and packets of one org in every flow table, the 5-minute and hourly levels folded first (the open buckets too). */
  async function totalsOf(orgId: string): Promise<Record<string, Totals>> {
    const ch = t.stack.clickhouse;
    await new RollupFold(ch).foldAll({ openToo: true });
    const totals = await Promise.all(
      tables.map(async (table) => {
        const counted = table === 'flows' ? 'count() AS n, uniqExact(event_id) AS ids' : 'sum(flows) AS n';
        const [row] = await ch.query<{ n: string; ids?: string; b: string; p: string }>(
          `SELECT ${counted}, sum(bytes) AS b, sum(packets) AS p FROM ${ch.database}.${table} WHERE org_id = '${orgId}'`,
        );
        const ids = row?.ids === undefined ? {} : { distinctIds: Number(row.ids) };
        return [table, { records: Number(row?.n), ...ids, bytes: Number(row?.b), packets: Number(row?.p) }] as const;
      }),
    );
    return Object.fromEntries(totals);
  }

  function storedOnce(flows: GeneratedFlows): Record<string, Totals> {
    const once = { records: flows.total, bytes: flows.totalBytes, packets: totalPackets(flows) };
    return Object.fromEntries(tables.map((table) => [table, table === 'flows' ? { ...once, distinctIds: flows.total } : once]));
  }

  test('a message written but never acknowledged is redelivered and leaves every flow table with each record once', async () => {
    const minted = await t.mintKey({ role: 'operator' });
    const flows = generateFlows(3_000, 1_000, 41);
    for (const body of flows.batches) await post(minted.key, body);

    // The crash: a worker writes two messages, then dies before acknowledging them.
    const n = names(t.stack.config.nats.prefix);
    const consumer = await t.stack.nats.js().consumers.get(n.stream, n.writers);
    const taken: JsMsg[] = [];
    for await (const m of await consumer.fetch({ max_messages: 2, expires: 2000 })) taken.push(m);
    expect(taken).toHaveLength(2);
    await newWorker().process(taken);
    for (const m of taken) m.nak();

    await drainWithNewWorker();
    expect(await totalsOf(minted.org_id)).toEqual(storedOnce(flows));
  });

  test('a retry with the same Idempotency-Key that JetStream no longer recognizes leaves every flow table with each record once', async () => {
    const minted = await t.mintKey({ role: 'operator' });
    const flows = generateFlows(150, 150, 43);
    const retry = { 'Idempotency-Key': `exactly-once-${transport}` };
    await post(minted.key, flows.batches[0]!, retry);
    await drainWithNewWorker();

    // The stream loses its de-duplication state (as past its 2-minute window): the retry is a new message.
    const { jsm } = t.stack.nats;
    const n = names(t.stack.config.nats.prefix);
    await jsm.streams.delete(n.stream);
    await ensureTopology(jsm, t.stack.adapters.topology);
    await post(minted.key, flows.batches[0]!, retry);
    expect((await jsm.streams.info(n.stream)).state.messages).toBe(1);

    await drainWithNewWorker();
    expect(await totalsOf(minted.org_id)).toEqual(storedOnce(flows));
  });

  test('a late retry of records posted without a timestamp, which take their receive time, is still stored once', async () => {
    const minted = await t.mintKey({ role: 'operator' });
    const flows = generateFlows(150, 150, 44);
    // No timestamps: each attempt stamps its records with its own receive time.
    const body = flows.batches[0]!.split('\n').map((line) => line.replace(/,"timestamp":\d+/, '')).join('\n');
    const retry = { 'Idempotency-Key': `late-retry-${transport}` };
    await post(minted.key, body, retry);
    await drainWithNewWorker();

    const { jsm } = t.stack.nats;
    const n = names(t.stack.config.nats.prefix);
    await jsm.streams.delete(n.stream);
    await ensureTopology(jsm, t.stack.adapters.topology);
    await post(minted.key, body, retry);

    await drainWithNewWorker();
    expect(await totalsOf(minted.org_id)).toEqual(storedOnce(flows));
  });
});
