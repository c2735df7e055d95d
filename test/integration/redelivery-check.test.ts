import { randomBytes } from 'node:crypto';
import type { JsMsg } from 'nats';
import { Registry } from 'prom-client';
import { parseFlow, flowRowJson } from '../../core/flow';
import { recordEventId } from '../../core/ids';
import { rowsOf } from '../../core/telemetry-headers';
import { TelemetryStore } from '../../storage/telemetry-store';
import { TelemetryPublisher } from '../../streams/telemetry-publisher';
import type { TelemetryWrites } from '../../workers/telemetry/stream-worker-ports';
import { generateFlows } from '../support/flows';
import { startTestStack, transports, type TestStack } from '../support/test-stack';
import { streamWorkerOn } from '../support/stream-worker';
import { names } from '../../streams/names';

/**
 * A worker that died after writing part of a batch: its messages come back
 * (here with `retry: true`) holding requests ClickHouse has whole, in part
 * (an insert cut between partitions), not at all, or whose other run (a
 * request published in two messages) alone is stored. The worker asks one
 * counts query for the batch, looks up id by id only the request stored in
 * part, and every row ends stored exactly once, on both engines.
 */
/** A message's rows (its detection digest after them is the rate detectors'). */
const lines = (message: JsMsg) => Buffer.from(rowsOf(message)).toString('utf8').split('\n').filter(Boolean);
const idOf = (line: string) => (JSON.parse(line) as { event_id: string }).event_id;
const requestOf = (id: string) => id.slice(0, 20);

describe.each(transports)('redelivered rows checked a batch at once on %s', (transport) => {
  let t: TestStack;
  beforeAll(async () => {
    t = await startTestStack(transport, { ROLES: 'api' });
  });
  afterAll(async () => {
    await t.stop();
  });

  /** A stream worker on the stack whose store counts the lookups of stored rows. */
  function countingWorker(store: TelemetryStore) {
    const calls = { prefixes: [] as string[], ids: [] as Array<{ table: string; ids: string[] }> };
    const counted: TelemetryWrites = {
      insert: (table, ndjson) => store.insert(table, ndjson),
      storedPrefixes: (...args) => (calls.prefixes.push(args[0]), store.storedPrefixes(...args)),
      existingEventIds: (table, org, min, max, ids) => (calls.ids.push({ table, ids }), store.existingEventIds(table, org, min, max, ids)),
      completeRollups: (writeIds) => store.completeRollups(writeIds),
      destinationMinutesOver: (...args) => store.destinationMinutesOver(...args),
      exporterDestinationMinutesOver: (...args) => store.exporterDestinationMinutesOver(...args),
    };
    return { worker: streamWorkerOn(t, { store: counted }), calls };
  }

  /** Ten small requests published in one turn: the publisher coalesces them into one message of ten request prefixes. */
  async function publishCoalesced(orgId: string): Promise<void> {
    const publisher = new TelemetryPublisher({ nats: t.stack.nats, prefix: t.stack.config.nats.prefix, registry: new Registry() });
    const flows = generateFlows(200, 20, 52);
    await Promise.all(
      flows.batches.map((body) => {
        const hex = randomBytes(8).toString('hex');
        const now = Date.now();
        const stamped = body.split('\n').map((l, i) => flowRowJson(parseFlow(JSON.parse(l)).data!, { org_id: orgId, event_id: recordEventId(hex, i), ts: now, received_at: now }));
        const times = stamped.map((s) => s.ts);
        return publisher.publish({ kind: 'flow', orgId, batchId: `${orgId}.flow.${hex}`, lines: stamped.map((s) => s.json), digests: stamped.map((s) => s.digest), minTs: Math.min(...times), maxTs: Math.max(...times) });
      }),
    );
  }

  async function storedIds(orgId: string): Promise<string[]> {
    const ch = t.stack.clickhouse;
    const rows = await ch.query<{ event_id: string }>(`SELECT event_id FROM ${ch.database}.flows WHERE org_id = '${orgId}'`);
    return rows.map((r) => r.event_id).sort();
  }

  test('a batch of messages whose rows are stored whole, in part or not at all is written with every row stored exactly once', async () => {
    const minted = await t.mintKey({ role: 'operator' });
    // Four requests of 300 flows, each its own message (past the coalescing limit), and one coalesced message.
    for (const body of generateFlows(1_200, 300, 51).batches) {
      expect((await t.request('POST', '/flow', { key: minted.key, raw: body, contentType: 'application/x-ndjson' })).status).toBe(201);
    }
    await publishCoalesced(minted.org_id);
    const n = names(t.stack.config.nats.prefix);
    const consumer = await t.stack.nats.js().consumers.get(n.stream, n.writers);
    const taken: JsMsg[] = [];
    for await (const m of await consumer.fetch({ max_messages: 10, expires: 2000 })) taken.push(m);
    expect(taken).toHaveLength(5);
    const [whole, part, none, otherRunStored, coalesced] = taken.map(lines) as [string[], string[], string[], string[], string[]];
    const coalescedRequests = [...new Set(coalesced.map((l) => requestOf(idOf(l))))];
    expect(coalescedRequests).toHaveLength(10);

    // What the attempt that died had written: one request whole, 120 rows of another, half the coalesced requests,
    // and the other run of the fourth request (its indexes 300 to 599, as if the request had been published in two messages).
    const otherRun = otherRunStored.map((l, i) => l.replace(idOf(l), recordEventId(idOf(l).slice(4, 20), 300 + i)));
    const halfCoalesced = coalesced.filter((l) => coalescedRequests.indexOf(requestOf(idOf(l))) % 2 === 0);
    const store = new TelemetryStore(t.stack.clickhouse);
    await store.insert('flows', [...whole, ...part.slice(0, 120), ...halfCoalesced, ...otherRun].join('\n') + '\n');

    const { worker, calls } = countingWorker(store);
    await worker.process(taken, { retry: true });
    for (const m of taken) m.ack();

    expect(calls.prefixes).toEqual(['flows']);
    // (Signals the detectors derive are checked by their own ids, as before.)
    expect(calls.ids.filter((c) => c.table === 'flows')).toEqual([{ table: 'flows', ids: part.map(idOf) }]);
    const expected = [...whole, ...part, ...none, ...otherRunStored, ...otherRun, ...coalesced].map(idOf).sort();
    expect(new Set(expected).size).toBe(1_200 + 300 + 200);
    expect(await storedIds(minted.org_id)).toEqual(expected);
  });
});
