import { Registry } from 'prom-client';
import { createLogger } from '../../observability/logger';
import { metricTotal } from '../../observability/metrics';
import { ClickHouseError } from '../../storage/clickhouse';
import type { TelemetryTable } from '../../storage/telemetry-store';
import { headerNames } from '../../streams/telemetry-publisher';
import { BatchWriter, UnreadableMessageError } from '../../workers/batch-writer';
import { Batcher } from '../../workers/batcher';
import { BatchHandler, giveBackDecision, nakDelayMs } from '../../workers/give-back';
import { streamWorkerMetrics } from '../../workers/stream-worker-metrics';
import type { DeadLetterSink, TelemetryWrites, WorkMessage } from '../../workers/stream-worker-ports';

/**
 * The stream worker's decisions on plain objects: when a batch is flushed,
 * what is acknowledged, retried, given back or dead-lettered, and which rows
 * are looked up before they are written. No engine is involved.
 */
const log = createLogger('silent');

interface FakeMessage extends WorkMessage {
  id: number;
  events: string[];
}

let nextId = 0;
function message(opts: { deliveries?: number; rows?: object[]; kind?: string; seq?: number; body?: string; idempotent?: boolean } = {}): FakeMessage {
  const id = (nextId += 1);
  const rows = opts.rows ?? [{ org_id: 'org_a', event_id: `evt_${id}`, ts: 1_000, bytes: 10 }];
  const headers = new Map<string, string>([
    [headerNames.kind, opts.kind ?? 'flow'],
    [headerNames.org, 'org_a'],
    [headerNames.minTs, '1000'],
    [headerNames.maxTs, '1000'],
    ...(opts.idempotent ? [[headerNames.idempotent, '1'] as [string, string]] : []),
  ]);
  const deliveries = opts.deliveries ?? 1;
  const events: string[] = [];
  return {
    id,
    events,
    subject: `t.tel.flow.org_a`,
    data: Buffer.from(opts.body ?? rows.map((r) => JSON.stringify(r)).join('\n') + '\n'),
    headers: { get: (k: string) => headers.get(k) ?? '', [Symbol.iterator]: () => [...headers].map(([k, v]) => [k, [v]] as [string, string[]])[Symbol.iterator]() },
    info: { redelivered: deliveries > 1, redeliveryCount: deliveries, streamSequence: opts.seq ?? id, timestampNanos: Date.now() * 1e6 },
    ack: () => events.push('ack'),
    nak: (delay?: number) => events.push(`nak ${delay}`),
    term: () => events.push('term'),
    working: () => events.push('working'),
  };
}

function deferred() {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

const policy = { retryDelayMs: 1000, maxDeliveries: 3 };
const refusal = () => new ClickHouseError('clickhouse insert into flows failed: Code: 27, cannot parse input', 27);
const outage = () => new ClickHouseError('clickhouse insert into flows failed: connect ECONNREFUSED', undefined);

function handlerWith(process: (batch: WorkMessage[], opts?: { retry?: boolean }) => Promise<void>, deadLetters?: DeadLetterSink) {
  const registry = new Registry();
  const dead: WorkMessage[] = [];
  const sink = deadLetters ?? { deadLetter: (m: WorkMessage) => Promise.resolve(void dead.push(m)) };
  const handler = new BatchHandler(policy, { process, deadLetters: sink, metrics: streamWorkerMetrics(registry), log });
  return { handler, dead, registry };
}

describe('stream worker batching', () => {
  afterEach(() => jest.useRealTimers());

  test('a batch is flushed as soon as it holds maxMessages', async () => {
    const handled: number[][] = [];
    const batcher = new Batcher<FakeMessage>({ maxMessages: 3, maxWaitMs: 60_000, keepAliveMs: 60_000 }, (b) => Promise.resolve(void handled.push(b.map((m) => m.id))), () => undefined);
    const [a, b, c] = [message(), message(), message()];
    await batcher.add(a);
    await batcher.add(b);
    expect(handled).toEqual([]);
    await batcher.add(c);
    expect(handled).toEqual([[a.id, b.id, c.id]]);
  });

  test('a batch that does not fill is flushed once maxWaitMs passed since its first message', async () => {
    jest.useFakeTimers();
    const handled: number[] = [];
    const batcher = new Batcher<FakeMessage>({ maxMessages: 100, maxWaitMs: 200, keepAliveMs: 60_000 }, (b) => Promise.resolve(void handled.push(b.length)), () => undefined);
    await batcher.add(message());
    await jest.advanceTimersByTimeAsync(150);
    await batcher.add(message());
    await jest.advanceTimersByTimeAsync(49);
    expect(handled).toEqual([]);
    await jest.advanceTimersByTimeAsync(1);
    expect(handled).toEqual([2]);
  });

  test('flushes run one at a time, in the order the batches filled', async () => {
    const gates = [deferred(), deferred()];
    const started: number[] = [];
    let running = 0;
    let mostAtOnce = 0;
    const batcher = new Batcher<FakeMessage>({ maxMessages: 1, maxWaitMs: 60_000, keepAliveMs: 60_000 }, async (b) => {
      started.push(b[0]!.id);
      running += 1;
      mostAtOnce = Math.max(mostAtOnce, running);
      await gates[started.length - 1]!.promise;
      running -= 1;
    }, () => undefined);
    const [first, second] = [message(), message()];
    const firstAdded = batcher.add(first);
    const secondAdded = batcher.add(second);
    await new Promise((r) => setImmediate(r));
    expect(started).toEqual([first.id]);
    gates[0]!.resolve();
    await firstAdded;
    await new Promise((r) => setImmediate(r));
    expect(started).toEqual([first.id, second.id]);
    gates[1]!.resolve();
    await secondAdded;
    expect(mostAtOnce).toBe(1);
  });

  test('a batch handed to a flush is kept alive with working() until it is handled, and no longer', async () => {
    jest.useFakeTimers();
    const gate = deferred();
    const batcher = new Batcher<FakeMessage>({ maxMessages: 1, maxWaitMs: 60_000, keepAliveMs: 1_000 }, () => gate.promise, () => undefined);
    const m = message();
    const added = batcher.add(m);
    await jest.advanceTimersByTimeAsync(2_500);
    expect(m.events).toEqual(['working', 'working']);
    gate.resolve();
    await added;
    await jest.advanceTimersByTimeAsync(5_000);
    expect(m.events).toEqual(['working', 'working']);
  });

  test('a flush that throws does not stop the flushes after it', async () => {
    const handled: number[] = [];
    const errors: unknown[] = [];
    const batcher = new Batcher<FakeMessage>({ maxMessages: 1, maxWaitMs: 60_000, keepAliveMs: 60_000 }, (b) => (handled.push(b[0]!.id) === 1 ? Promise.reject(new Error('boom')) : Promise.resolve()), (err) => void errors.push(err));
    await batcher.add(message());
    await batcher.add(message());
    expect(handled).toHaveLength(2);
    expect(errors).toHaveLength(1);
  });
});

describe('stream worker give-back', () => {
  test('a batch written whole is acknowledged only after the write', async () => {
    const batch = [message(), message()];
    const seenAtWrite: string[][] = [];
    const { handler } = handlerWith((b) => Promise.resolve(void seenAtWrite.push(...b.map((m) => [...(m as FakeMessage).events]))));
    await handler.handle(batch);
    expect(seenAtWrite).toEqual([[], []]);
    expect(batch.map((m) => m.events)).toEqual([['ack'], ['ack']]);
  });

  test('a failed batch is retried message by message, each treated as possibly written', async () => {
    const calls: Array<{ ids: number[]; retry?: boolean }> = [];
    const batch = [message(), message()];
    const { handler } = handlerWith((b, opts) => {
      calls.push({ ids: b.map((m) => (m as FakeMessage).id), retry: opts?.retry });
      return b.length > 1 ? Promise.reject(outage()) : Promise.resolve();
    });
    await handler.handle(batch);
    expect(calls).toEqual([{ ids: [batch[0]!.id, batch[1]!.id], retry: undefined }, { ids: [batch[0]!.id], retry: true }, { ids: [batch[1]!.id], retry: true }]);
    expect(batch.map((m) => m.events)).toEqual([['ack'], ['ack']]);
  });

  test('a message that fails again on its own is given back while the rest of its batch is acknowledged', async () => {
    const [good, bad] = [message(), message({ deliveries: 2 })];
    const { handler } = handlerWith((b) => (b.includes(bad) ? Promise.reject(refusal()) : Promise.resolve()));
    await handler.handle([good, bad]);
    expect(good.events).toEqual(['ack']);
    expect(bad.events).toEqual(['nak 2000']);
  });

  test('the delay before a message is offered again doubles with each delivery', () => {
    expect([1, 2, 3, 4].map((d) => nakDelayMs(d, 1000))).toEqual([1000, 2000, 4000, 8000]);
  });

  test('the delay before a message is offered again stops growing at 30 seconds', () => {
    expect(nakDelayMs(6, 1000)).toBe(30_000);
    expect(nakDelayMs(60, 1000)).toBe(30_000);
  });

  test('a message ClickHouse refused on its maxDeliveries-th delivery goes to the dead-letter stream and is terminated', async () => {
    const m = message({ deliveries: 3 });
    const { handler, dead, registry } = handlerWith(() => Promise.reject(refusal()));
    await handler.handle([m]);
    expect(dead).toEqual([m]);
    expect(m.events).toEqual(['term']);
    expect(await metricTotal(registry, 'nettel_worker_dead_letters_total')).toBe(1);
  });

  test('a message ClickHouse refused fewer than maxDeliveries times is offered again later', () => {
    expect(giveBackDecision(refusal(), 2, policy)).toEqual({ action: 'retry', delayMs: 2000 });
  });

  test('a message that failed in a ClickHouse outage is never dead-lettered, however often it was delivered', async () => {
    const m = message({ deliveries: 50 });
    const { handler, dead } = handlerWith(() => Promise.reject(outage()));
    await handler.handle([m]);
    expect(dead).toEqual([]);
    expect(m.events).toEqual(['nak 30000']);
  });

  test('an error that is neither a ClickHouse refusal nor unreadable data is retried, not dead-lettered', () => {
    expect(giveBackDecision(new TypeError('a bug'), 10, policy)).toEqual({ action: 'retry', delayMs: 30_000 });
  });

  test('a message whose body is not NDJSON is dead-lettered after maxDeliveries', () => {
    expect(giveBackDecision(new UnreadableMessageError('t.tel.flow.org_a'), 3, policy)).toEqual({ action: 'dead-letter' });
  });

  test('a message that cannot be dead-lettered is offered again instead of being dropped', async () => {
    const m = message({ deliveries: 3 });
    const { handler } = handlerWith(() => Promise.reject(refusal()), { deadLetter: () => Promise.reject(new Error('nats down')) });
    await handler.handle([m]);
    expect(m.events).toEqual(['nak 4000']);
  });
});

describe('stream worker writes', () => {
  function storeHolding(stored: string[]) {
    const inserts: Array<{ table: TelemetryTable; rows: Array<{ event_id: string }> }> = [];
    const lookups: string[][] = [];
    const store: TelemetryWrites = {
      insert: (table, ndjson) => {
        const rows = String(ndjson).split('\n').filter(Boolean).map((l) => JSON.parse(l) as { event_id: string });
        inserts.push({ table, rows });
        return Promise.resolve();
      },
      existingEventIds: (_table, _org, _min, _max, ids) => {
        lookups.push(ids);
        return Promise.resolve(new Set(ids.filter((id) => stored.includes(id))));
      },
      destinationMinutesOver: () => Promise.resolve([]),
      exporterDestinationMinutesOver: () => Promise.resolve([]),
    };
    return { store, inserts, lookups };
  }

  function writerWith(store: TelemetryWrites, mayHaveACopy = false) {
    const registry = new Registry();
    const writer = new BatchWriter({ store, correlator: { recompute: () => Promise.resolve([]) }, metrics: streamWorkerMetrics(registry), log, mayHaveACopy: () => mayHaveACopy });
    return { writer, registry };
  }

  const rows = (...ids: string[]) => ids.map((event_id) => ({ org_id: 'org_a', event_id, ts: 1_000, bytes: 10 }));

  test('a first delivery of fresh traffic is written in one insert without looking up stored rows', async () => {
    const { store, inserts, lookups } = storeHolding([]);
    await writerWith(store).writer.process([message({ rows: rows('e1', 'e2') }), message({ rows: rows('e3') })]);
    expect(lookups).toEqual([]);
    expect(inserts.map((i) => i.rows.map((r) => r.event_id))).toEqual([['e1', 'e2', 'e3']]);
  });

  test('rows of a redelivered message that ClickHouse already holds are not written again', async () => {
    const { store, inserts } = storeHolding(['e1']);
    await writerWith(store).writer.process([message({ rows: rows('e1', 'e2'), deliveries: 2 })]);
    expect(inserts.map((i) => i.rows.map((r) => r.event_id))).toEqual([['e2']]);
  });

  test('a first delivery the source may have handed out before is checked for stored rows', async () => {
    const { store, inserts, lookups } = storeHolding(['e1', 'e2']);
    await writerWith(store, true).writer.process([message({ rows: rows('e1', 'e2') })]);
    expect(lookups).toEqual([['e1', 'e2']]);
    expect(inserts).toEqual([]);
  });

  test('a first delivery of a batch sent with an Idempotency-Key is checked, and only its rows ClickHouse lacks are written', async () => {
    const { store, inserts, lookups } = storeHolding(['e1']);
    await writerWith(store).writer.process([message({ rows: rows('e1', 'e2'), idempotent: true }), message({ rows: rows('e3') })]);
    expect(lookups).toEqual([['e1', 'e2']]);
    expect(inserts.map((i) => i.rows.map((r) => r.event_id))).toEqual([['e2', 'e3']]);
  });

  test('two copies of one idempotent batch pulled together are written once', async () => {
    const { store, inserts } = storeHolding([]);
    await writerWith(store).writer.process([message({ rows: rows('e1', 'e2'), idempotent: true }), message({ rows: rows('e1', 'e2'), idempotent: true })]);
    expect(inserts.map((i) => i.rows.map((r) => r.event_id))).toEqual([['e1', 'e2']]);
  });

  test('each insert is observed in the write latency and batch size histograms of its table', async () => {
    const { store } = storeHolding([]);
    const { writer, registry } = writerWith(store);
    await writer.process([message({ rows: rows('e1', 'e2', 'e3') })]);
    const sizes = await registry.getSingleMetric('nettel_worker_write_batch_rows')!.get();
    expect(sizes.values).toContainEqual(expect.objectContaining({ metricName: 'nettel_worker_write_batch_rows_sum', labels: { table: 'flows' }, value: 3 }));
    const latency = await registry.getSingleMetric('nettel_worker_clickhouse_write_seconds')!.get();
    expect(latency.values).toContainEqual(expect.objectContaining({ metricName: 'nettel_worker_clickhouse_write_seconds_count', labels: { table: 'flows' }, value: 1 }));
  });

  test('a message whose body is not NDJSON fails with an unreadable-message error when its rows are read', async () => {
    const { store } = storeHolding([]);
    await expect(writerWith(store).writer.process([message({ body: 'not json\n', deliveries: 2 })])).rejects.toBeInstanceOf(UnreadableMessageError);
  });
});
