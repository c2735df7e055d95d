import { Registry } from 'prom-client';
import { createLogger } from '../../observability/logger';
import { BatchWriter, UnreadableMessageError } from '../../workers/telemetry/batch-writer';
import { Batcher } from '../../workers/telemetry/batcher';
import { streamWorkerMetrics } from '../../workers/telemetry/stream-worker-metrics';
import type { TelemetryWrites } from '../../workers/telemetry/stream-worker-ports';
import { storeHolding } from '../support/telemetry-writes';
import { message, type FakeMessage } from '../support/work-messages';

/**
 * The stream worker's decisions on plain objects: when a batch is flushed,
 * and which rows are looked up before they are written (what happens to a
 * batch that failed: stream-worker-give-back.test.ts). No engine is involved.
 */
const log = createLogger('silent');

function deferred() {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

describe('stream worker batching', () => {
  afterEach(() => jest.useRealTimers());

  test('a batch is flushed as soon as it holds maxMessages', async () => {
    const handled: number[][] = [];
    const batcher = new Batcher<FakeMessage>({ maxMessages: 3, maxBytes: 1e9, maxWaitMs: 60_000, keepAliveMs: 60_000 }, (b) => Promise.resolve(void handled.push(b.map((m) => m.id))), () => undefined);
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
    const batcher = new Batcher<FakeMessage>({ maxMessages: 100, maxBytes: 1e9, maxWaitMs: 200, keepAliveMs: 60_000 }, (b) => Promise.resolve(void handled.push(b.length)), () => undefined);
    await batcher.add(message());
    await jest.advanceTimersByTimeAsync(150);
    await batcher.add(message());
    await jest.advanceTimersByTimeAsync(49);
    expect(handled).toEqual([]);
    await jest.advanceTimersByTimeAsync(1);
    expect(handled).toEqual([2]);
  });

  test('a batch is flushed as soon as its messages reach maxBytes', async () => {
    const handled: number[][] = [];
    const batcher = new Batcher<FakeMessage>({ maxMessages: 100, maxBytes: 100, maxWaitMs: 60_000, keepAliveMs: 60_000 }, (b) => Promise.resolve(void handled.push(b.map((m) => m.id))), () => undefined);
    const [a, b] = [message({ body: 'x'.repeat(60) }), message({ body: 'x'.repeat(40) })];
    await batcher.add(a);
    expect(handled).toEqual([]);
    await batcher.add(b);
    expect(handled).toEqual([[a.id, b.id]]);
  });

  test('a batch due while a flush runs keeps growing, and is flushed as soon as that flush ends', async () => {
    jest.useFakeTimers();
    const gate = deferred();
    const handled: number[] = [];
    const batcher = new Batcher<FakeMessage>({ maxMessages: 100, maxBytes: 1e9, maxWaitMs: 200, keepAliveMs: 60_000 }, async (b) => {
      handled.push(b.length);
      if (handled.length === 1) await gate.promise;
    }, () => undefined);
    await batcher.add(message());
    await jest.advanceTimersByTimeAsync(200);
    expect(handled).toEqual([1]);
    for (let i = 0; i < 3; i += 1) {
      await batcher.add(message());
      await jest.advanceTimersByTimeAsync(300);
    }
    expect(handled).toEqual([1]);
    gate.resolve();
    await jest.advanceTimersByTimeAsync(0);
    expect(handled).toEqual([1, 3]);
  });

  test('messages due while a flush runs are kept alive with working() until their own flush takes them', async () => {
    jest.useFakeTimers();
    const gate = deferred();
    let flushes = 0;
    const batcher = new Batcher<FakeMessage>({ maxMessages: 100, maxBytes: 1e9, maxWaitMs: 200, keepAliveMs: 1_000 }, async () => {
      flushes += 1;
      if (flushes === 1) await gate.promise;
    }, () => undefined);
    await batcher.add(message());
    await jest.advanceTimersByTimeAsync(200);
    const waiting = message();
    await batcher.add(waiting);
    await jest.advanceTimersByTimeAsync(2_200);
    expect(waiting.events).toEqual(['working', 'working']);
    gate.resolve();
    await jest.advanceTimersByTimeAsync(5_000);
    expect(flushes).toBe(2);
    expect(waiting.events).toEqual(['working', 'working']);
  });

  test('flushes run one at a time, in the order the batches filled', async () => {
    const gates = [deferred(), deferred()];
    const started: number[] = [];
    let running = 0;
    let mostAtOnce = 0;
    const batcher = new Batcher<FakeMessage>({ maxMessages: 1, maxBytes: 1e9, maxWaitMs: 60_000, keepAliveMs: 60_000 }, async (b) => {
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
    const batcher = new Batcher<FakeMessage>({ maxMessages: 1, maxBytes: 1e9, maxWaitMs: 60_000, keepAliveMs: 1_000 }, () => gate.promise, () => undefined);
    const m = message();
    const added = batcher.add(m);
    await jest.advanceTimersByTimeAsync(2_500);
    expect(m.events).toEqual(['working', 'working']);
    gate.resolve();
    await added;
    await jest.advanceTimersByTimeAsync(5_000);
    expect(m.events).toEqual(['working', 'working']);
  });

  test('a batch whose write ended is followed by the next batch before it is handled whole, and a flush waits for both', async () => {
    const rest = deferred();
    const started: number[] = [];
    const batcher = new Batcher<FakeMessage>({ maxMessages: 1, maxBytes: 1e9, maxWaitMs: 60_000, keepAliveMs: 60_000 }, async (b, written) => {
      started.push(b[0]!.id);
      if (started.length > 1) return;
      written();
      await rest.promise;
    }, () => undefined);
    const [first, second] = [message(), message()];
    await batcher.add(first);
    await batcher.add(second);
    expect(started).toEqual([first.id, second.id]);
    let flushed = false;
    const flushing = batcher.flush().then(() => {
      flushed = true;
    });
    await new Promise((r) => setImmediate(r));
    expect(flushed).toBe(false);
    rest.resolve();
    await flushing;
    expect(flushed).toBe(true);
  });

  test('a batch due while another is written waits for that write, not for the rest of its handling', async () => {
    jest.useFakeTimers();
    const [write, rest] = [deferred(), deferred()];
    const handled: number[] = [];
    const batcher = new Batcher<FakeMessage>({ maxMessages: 100, maxBytes: 1e9, maxWaitMs: 200, keepAliveMs: 60_000 }, async (b, written) => {
      handled.push(b[0]!.id);
      if (handled.length > 1) return;
      await write.promise;
      written();
      await rest.promise;
    }, () => undefined);
    const [first, second] = [message(), message()];
    void batcher.add(first);
    await jest.advanceTimersByTimeAsync(250);
    void batcher.add(second);
    await jest.advanceTimersByTimeAsync(250);
    expect(handled).toEqual([first.id]);
    write.resolve();
    await jest.advanceTimersByTimeAsync(0);
    expect(handled).toEqual([first.id, second.id]);
    rest.resolve();
    await batcher.flush();
  });

  test('a flush that throws does not stop the flushes after it', async () => {
    const handled: number[] = [];
    const errors: unknown[] = [];
    const batcher = new Batcher<FakeMessage>({ maxMessages: 1, maxBytes: 1e9, maxWaitMs: 60_000, keepAliveMs: 60_000 }, (b) => (handled.push(b[0]!.id) === 1 ? Promise.reject(new Error('boom')) : Promise.resolve()), (err) => void errors.push(err));
    await batcher.add(message());
    await batcher.add(message());
    expect(handled).toHaveLength(2);
    expect(errors).toHaveLength(1);
  });
});


describe('stream worker writes', () => {
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

  test('a signal row that names a second org after its own is unreadable, never correlated under either', async () => {
    const { store } = storeHolding([]);
    const body = '{"org_id":"org_a","event_id":"evt_1","ts":1000,"org_id":"org_b"}\n';
    await expect(writerWith(store).writer.process([message({ kind: 'signal', body })])).rejects.toBeInstanceOf(UnreadableMessageError);
  });
});
