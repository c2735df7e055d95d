import { Registry } from 'prom-client';
import { createLogger } from '../../observability/logger';
import { metricTotal } from '../support/metrics';
import { ClickHouseError } from '../../storage/clickhouse';
import { UnreadableMessageError } from '../../workers/telemetry/batch-writer';
import { BatchHandler, giveBackDecision, nakDelayMs, type RestOfBatch } from '../../workers/telemetry/give-back';
import { streamWorkerMetrics } from '../../workers/telemetry/stream-worker-metrics';
import type { DeadLetterSink, WorkMessage } from '../../workers/telemetry/stream-worker-ports';
import { message, type FakeMessage } from '../support/work-messages';

/**
 * What the stream worker does with a batch that failed, on plain objects:
 * what is acknowledged, offered again and when, dead-lettered, and reported
 * as an outage. No engine is involved.
 */
const log = createLogger('silent');

const policy = { retryDelayMs: 1000, maxDeliveries: 3 };
const refusal = () => new ClickHouseError('clickhouse insert into flows failed: Code: 27, cannot parse input', 27);
const outage = () => new ClickHouseError('clickhouse insert into flows failed: connect ECONNREFUSED', undefined, { cause: Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }) });
const memoryLimit = () => new ClickHouseError('clickhouse insert into flows failed: Code: 241. DB::Exception: Memory limit exceeded', 241);

type Process = (batch: WorkMessage[], opts?: { retry?: boolean }) => Promise<void>;

/** A handler whose write does the whole processing (nothing left after it), unless `write` is given. */
function handlerWith(process: Process, deadLetters?: DeadLetterSink, write?: (batch: WorkMessage[]) => Promise<RestOfBatch>) {
  const registry = new Registry();
  const dead: WorkMessage[] = [];
  const sink = deadLetters ?? { deadLetter: (m: WorkMessage) => Promise.resolve(void dead.push(m)) };
  const wholeInWrite = (batch: WorkMessage[]) => process(batch).then((): RestOfBatch => () => Promise.resolve());
  const handler = new BatchHandler(policy, { write: write ?? wholeInWrite, process, deadLetters: sink, metrics: streamWorkerMetrics(registry), log });
  return { handler, dead, registry };
}

function deferred() {
  let resolve!: () => void;
  let reject!: (err: unknown) => void;
  const promise = new Promise<void>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

const settle = () => new Promise((r) => setImmediate(r));

describe('stream worker give-back', () => {
  afterEach(() => jest.useRealTimers());

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

  test('a message that cannot be dead-lettered is offered again instead of being dropped, and the refusal is counted', async () => {
    const m = message({ deliveries: 3 });
    const { handler, registry } = handlerWith(() => Promise.reject(refusal()), { deadLetter: () => Promise.reject(new Error('maximum bytes exceeded')) });
    await handler.handle([m]);
    expect(m.events).toEqual(['nak 4000']);
    expect(await metricTotal(registry, 'nettel_worker_dead_letter_refusals_total')).toBe(1);
    expect(await metricTotal(registry, 'nettel_worker_dead_letters_total')).toBe(0);
  });

  test('a message ClickHouse could not take for a transient reason (memory limit) is never dead-lettered, however often it was delivered', async () => {
    const m = message({ deliveries: 50 });
    const { handler, dead } = handlerWith(() => Promise.reject(memoryLimit()));
    await handler.handle([m]);
    expect(dead).toEqual([]);
    expect(m.events).toEqual(['nak 30000']);
  });

  test('a message refused with a ClickHouse code the classification does not know is dead-lettered after maxDeliveries', () => {
    const unknown = new ClickHouseError('clickhouse insert into flows failed: Code: 4242', 4242);
    expect(giveBackDecision(unknown, 2, policy)).toEqual({ action: 'retry', delayMs: 2000 });
    expect(giveBackDecision(unknown, 3, policy)).toEqual({ action: 'dead-letter' });
  });

  test('each message that fails on its own is counted by class and reason', async () => {
    const { handler, registry } = handlerWith(() => Promise.reject(outage()));
    await handler.handle([message(), message()]);
    const values = (await registry.getSingleMetric('nettel_worker_write_failures_total')!.get()).values;
    expect(values.map((v) => ({ labels: v.labels, value: v.value }))).toEqual([{ labels: { class: 'transient', reason: 'network' }, value: 2 }]);
  });

  test('a transient failure is reported as an outage until a write succeeds', async () => {
    let failing = true;
    const { handler } = handlerWith(() => (failing ? Promise.reject(memoryLimit()) : Promise.resolve()));
    await handler.handle([message()]);
    expect(handler.failingSince?.reason).toBe('memory_limit');
    failing = false;
    await handler.handle([message()]);
    expect(handler.failingSince).toBeUndefined();
  });

  test('an outage reported earlier ends when a message is dead-lettered', async () => {
    let err = memoryLimit();
    const { handler } = handlerWith(() => Promise.reject(err));
    await handler.handle([message()]);
    err = refusal();
    await handler.handle([message({ deliveries: 3 })]);
    expect(handler.failingSince).toBeUndefined();
  });

  test('a refusal of one message is not reported as an outage', async () => {
    const { handler } = handlerWith(() => Promise.reject(refusal()));
    await handler.handle([message()]);
    expect(handler.failingSince).toBeUndefined();
  });

  test('a forged message is dead-lettered at once, counted, and never handed to the writer', async () => {
    const forged = message({ body: `{"org_id":"org_a","x":1}\n\nINSERT INTO api_keys VALUES ('pwned')\n` });
    const good = message();
    const written: WorkMessage[] = [];
    const { handler, dead, registry } = handlerWith((b) => Promise.resolve(void written.push(...b)));
    await handler.handle([forged, good]);
    expect(written).toEqual([good]);
    expect(dead).toEqual([forged]);
    expect(forged.events).toEqual(['term']);
    expect(good.events).toEqual(['ack']);
    expect(await metricTotal(registry, 'nettel_worker_messages_refused_total')).toBe(1);
  });

  test('the next batch is written while the rest of the batch before runs, and neither is acknowledged before its rest', async () => {
    const steps: string[] = [];
    const rests = [deferred(), deferred()];
    const { handler } = handlerWith(() => Promise.resolve(), undefined, () => {
      const n = steps.filter((s) => s.startsWith('write')).length;
      steps.push(`write ${n}`);
      return Promise.resolve(() => {
        steps.push(`rest ${n}`);
        return rests[n]!.promise;
      });
    });
    const [first, second] = [message(), message()];
    const nextMayWrite = deferred();
    const firstHandled = handler.handle([first], nextMayWrite.resolve);
    await nextMayWrite.promise;
    const secondHandled = handler.handle([second]);
    await settle();
    expect(steps).toEqual(['write 0', 'rest 0', 'write 1']);
    expect([first.events, second.events]).toEqual([[], []]);
    rests[0]!.resolve();
    await firstHandled;
    await settle();
    expect(steps).toEqual(['write 0', 'rest 0', 'write 1', 'rest 1']);
    expect([first.events, second.events]).toEqual([['ack'], []]);
    rests[1]!.resolve();
    await secondHandled;
    expect(second.events).toEqual(['ack']);
  });

  test('a batch written while the rest of the one before runs lets the next be written only once that rest is done', async () => {
    const rest = deferred();
    const { handler } = handlerWith(() => Promise.resolve(), undefined, () => Promise.resolve(() => rest.promise));
    const firstWritten = deferred();
    void handler.handle([message()], firstWritten.resolve);
    await firstWritten.promise;
    let secondWritten = false;
    void handler.handle([message()], () => {
      secondWritten = true;
    });
    await settle();
    expect(secondWritten).toBe(false);
    rest.resolve();
    await settle();
    expect(secondWritten).toBe(true);
  });

  test('a batch whose rest is refused is retried message by message at once, each treated as possibly written', async () => {
    const calls: Array<{ ids: number[]; retry?: boolean }> = [];
    const batch = [message(), message()];
    let rests = 0;
    const { handler } = handlerWith(
      (b, opts) => Promise.resolve(void calls.push({ ids: b.map((m) => (m as FakeMessage).id), retry: opts?.retry })),
      undefined,
      () =>
        Promise.resolve(() => {
          rests += 1;
          return Promise.reject(refusal());
        }),
    );
    await handler.handle(batch);
    expect(rests).toBe(1);
    expect(calls).toEqual([{ ids: [batch[0]!.id], retry: true }, { ids: [batch[1]!.id], retry: true }]);
    expect(batch.map((m) => m.events)).toEqual([['ack'], ['ack']]);
  });

  test('a rest that fails for a transient reason is run again whole after the retry delay, and no message is retried alone', async () => {
    jest.useFakeTimers();
    const calls: number[][] = [];
    const batch = [message(), message()];
    let rests = 0;
    const { handler, registry } = handlerWith(
      (b) => Promise.resolve(void calls.push(b.map((m) => (m as FakeMessage).id))),
      undefined,
      () => Promise.resolve(() => ((rests += 1) === 1 ? Promise.reject(outage()) : Promise.resolve())),
    );
    const handled = handler.handle(batch);
    await jest.advanceTimersByTimeAsync(999);
    expect(rests).toBe(1);
    await jest.advanceTimersByTimeAsync(1);
    await handled;
    expect(rests).toBe(2);
    expect(calls).toEqual([]);
    expect(batch.map((m) => m.events)).toEqual([['ack'], ['ack']]);
    expect(await metricTotal(registry, 'nettel_worker_rest_retries_total')).toBe(1);
  });

  test('a rest that keeps failing for a transient reason is run four times, then its messages are retried one by one', async () => {
    jest.useFakeTimers();
    const calls: number[][] = [];
    const batch = [message(), message()];
    let rests = 0;
    const { handler } = handlerWith(
      (b) => Promise.resolve(void calls.push(b.map((m) => (m as FakeMessage).id))),
      undefined,
      () =>
        Promise.resolve(() => {
          rests += 1;
          return Promise.reject(outage());
        }),
    );
    const handled = handler.handle(batch);
    await jest.advanceTimersByTimeAsync(7_000);
    await handled;
    expect(rests).toBe(4);
    expect(calls).toEqual([[batch[0]!.id], [batch[1]!.id]]);
  });
});
