import { Registry } from 'prom-client';
import { createLogger } from '../../observability/logger';
import { counter } from '../../observability/metrics';
import { ConsumeLoop, reopenDelayMs } from '../../workers/consume/consume-loop';
import { interruptionReason } from '../../workers/consume/jetstream-pull';
import { ConsumeInterrupted, type OpenedConsumer } from '../../workers/consume/consumer';
import type { MessageSource, WorkMessage } from '../../workers/telemetry/stream-worker-ports';

/**
 * The consume loop on a fake message source: a pull that fails is opened
 * again with a growing delay until stop(), what was taken is still flushed,
 * and the probe tells whether the worker consumes.
 */
const log = createLogger('silent');

/** One scripted pull: messages and a failure are pushed by the test; stop() ends it. */
class FakePull implements OpenedConsumer<WorkMessage> {
  private queue: Array<WorkMessage | Error | 'end'> = [];
  private wake?: () => void;
  stopped = false;

  push(item: WorkMessage | Error | 'end'): void {
    this.queue.push(item);
    this.wake?.();
  }

  stop(): void {
    this.stopped = true;
    this.push('end');
  }

  readonly messages = (async function* (pull: FakePull) {
    for (;;) {
      const item = pull.queue.shift();
      if (item === undefined) {
        await new Promise<void>((r) => (pull.wake = r));
        continue;
      }
      if (item === 'end') return;
      if (item instanceof Error) throw item;
      yield item;
    }
  })(this);
}

const opening = (pull: OpenedConsumer<WorkMessage>) => () => Promise.resolve(pull);
const m = (id: number) => ({ id }) as unknown as WorkMessage;

function harness(opens: Array<() => Promise<OpenedConsumer<WorkMessage>>>, now?: () => number) {
  const registry = new Registry();
  const restarts = counter(registry, { name: 'restarts_total', help: 'restarts', labelNames: ['reason'] as const });
  const events: string[] = [];
  let taken: WorkMessage[] = [];
  let added = 0;
  const source: MessageSource = {
    open: () => {
      events.push('open');
      const next = opens.shift();
      return next ? next() : new Promise<OpenedConsumer<WorkMessage>>(() => undefined);
    },
    mayHaveBeenDelivered: () => false,
  };
  const batches = {
    add: (msg: WorkMessage) => {
      taken.push(msg);
      added += 1;
      return Promise.resolve();
    },
    flush: () => {
      events.push(`flush ${taken.map((x) => (x as unknown as { id: number }).id).join(',')}`);
      taken = [];
      return Promise.resolve();
    },
  };
  const loop = new ConsumeLoop({ firstMs: 1, maxMs: 4 }, { source, batches, restarts, consumer: 'TEST_WRITERS', log, now });
  const restartsBy = async (): Promise<Record<string, number>> =>
    Object.fromEntries((await restarts.get()).values.map((v) => [String(v.labels.reason), v.value]));
  return { loop, events, restartsBy, added: () => added };
}

const until = async (check: () => boolean) => {
  for (let i = 0; i < 500 && !check(); i += 1) await new Promise((r) => setTimeout(r, 2));
  expect(check()).toBe(true);
};

describe('stream worker consume loop', () => {
  test('the delay between re-opens doubles from 250 ms and stops growing at 5 s', () => {
    const backoff = { firstMs: 250, maxMs: 5_000 };
    expect([0, 1, 2, 3, 4, 5, 6].map((a) => reopenDelayMs(a, backoff))).toEqual([250, 500, 1000, 2000, 4000, 5000, 5000]);
  });

  test('a pull that fails is opened again and consuming goes on', async () => {
    const [first, second] = [new FakePull(), new FakePull()];
    const { loop, events } = harness([opening(first), opening(second)]);
    await loop.start();
    first.push(m(1));
    first.push(new ConsumeInterrupted('consumer_deleted'));
    await until(() => events.filter((e) => e === 'open').length === 2);
    second.push(m(2));
    await loop.stop();
    expect(events).toEqual(['open', 'flush 1', 'open', 'flush 2', 'flush ']);
  });

  test('messages taken before a failure are flushed before the consumer is opened again', async () => {
    const first = new FakePull();
    const { loop, events } = harness([opening(first), opening(new FakePull())]);
    await loop.start();
    first.push(m(1));
    first.push(m(2));
    first.push(new ConsumeInterrupted('disconnected'));
    await until(() => events.length >= 3);
    expect(events.slice(0, 3)).toEqual(['open', 'flush 1,2', 'open']);
    await loop.stop();
  });

  test('each re-open counts in the restart metric by the reason consuming stopped', async () => {
    const first = new FakePull();
    const refused = () => Promise.reject(new ConsumeInterrupted('disconnected'));
    const { loop, events, restartsBy } = harness([opening(first), refused, refused, opening(new FakePull())]);
    await loop.start();
    first.push(new ConsumeInterrupted('consumer_deleted'));
    await until(() => events.filter((e) => e === 'open').length === 4);
    await loop.stop();
    expect(await restartsBy()).toEqual({ consumer_deleted: 1, disconnected: 2 });
  });

  test('a pull that ends while the worker runs is opened again', async () => {
    const first = new FakePull();
    const { loop, events, restartsBy } = harness([opening(first), opening(new FakePull())]);
    await loop.start();
    first.push('end');
    await until(() => events.filter((e) => e === 'open').length === 2);
    await loop.stop();
    expect(await restartsBy()).toEqual({ ended: 1 });
  });

  test('canConsume rejects while every pull fails at once, however briefly each opens, and resolves once one delivers', async () => {
    const pulls = [new FakePull(), new FakePull(), new FakePull()];
    // A stopped clock: however slowly this machine runs the test, no pull has been open for maxMs.
    const { loop, events, added } = harness(pulls.map(opening), () => 1_000_000);
    await loop.start();
    await expect(loop.canConsume()).resolves.toBeUndefined();
    pulls[0]!.push(new ConsumeInterrupted('error'));
    await until(() => events.filter((e) => e === 'open').length === 2);
    pulls[1]!.push(new ConsumeInterrupted('error'));
    await until(() => events.filter((e) => e === 'open').length === 3);
    await expect(loop.canConsume()).rejects.toThrow('pulls fail since');
    pulls[2]!.push(m(1));
    await until(() => added() === 1);
    await expect(loop.canConsume()).resolves.toBeUndefined();
    await loop.stop();
  });

  test('the probe rejects between a failure and a successful re-open, and resolves once consuming again', async () => {
    const first = new FakePull();
    let letOpen!: (pull: OpenedConsumer<WorkMessage>) => void;
    const { loop, events } = harness([opening(first), () => new Promise<OpenedConsumer<WorkMessage>>((r) => (letOpen = r))]);
    await loop.start();
    await expect(loop.probe()).resolves.toEqual({ detail: 'consuming' });
    first.push(new ConsumeInterrupted('consumer_deleted'));
    await until(() => events.filter((e) => e === 'open').length === 2);
    await expect(loop.probe()).rejects.toThrow('not consuming: consumer_deleted');
    letOpen(new FakePull());
    await until(() => events.length >= 3);
    await new Promise((r) => setImmediate(r));
    await expect(loop.probe()).resolves.toEqual({ detail: 'consuming' });
    await loop.stop();
  });

  test('stop ends the pull, flushes what was taken and opens nothing more', async () => {
    const first = new FakePull();
    const { loop, events } = harness([opening(first)]);
    await loop.start();
    first.push(m(7));
    await new Promise((r) => setImmediate(r));
    await loop.stop();
    expect(first.stopped).toBe(true);
    expect(events).toEqual(['open', 'flush 7', 'flush ']);
    await expect(loop.probe()).rejects.toThrow('not consuming');
  });

  test('a worker that cannot open the consumer at all fails its start', async () => {
    const { loop } = harness([() => Promise.reject(new ConsumeInterrupted('stream_not_found'))]);
    await expect(loop.start()).rejects.toThrow('consuming stopped: stream_not_found');
  });

  test('a start waits out a busy server: opens that time out are tried again, each counted, until one opens', async () => {
    const first = new FakePull();
    const { loop, events, restartsBy } = harness([() => Promise.reject(new ConsumeInterrupted('timeout')), () => Promise.reject(new ConsumeInterrupted('no_responders')), opening(first)]);
    await loop.start();
    first.push(m(1));
    await until(() => events.length >= 3);
    expect(events.slice(0, 3)).toEqual(['open', 'open', 'open']);
    expect(await restartsBy()).toEqual({ timeout: 1, no_responders: 1 });
    await expect(loop.probe()).resolves.toEqual({ detail: 'consuming' });
    await loop.stop();
  });

  test('a start that a busy server keeps refusing past its patience fails', async () => {
    let clock = 0;
    const timeouts = Array.from({ length: 100 }, () => () => {
      clock += 20_000;
      return Promise.reject(new ConsumeInterrupted('timeout'));
    });
    const { loop, events } = harness(timeouts, () => clock);
    await expect(loop.start()).rejects.toThrow('consuming stopped: timeout');
    expect(events).toEqual(['open', 'open', 'open']);
  });

  test('a pull the server ended because the consumer was deleted is labelled consumer_deleted', () => {
    expect(interruptionReason({ code: '409', message: 'consumer deleted' })).toBe('consumer_deleted');
  });

  test('an open that found no consumer is labelled by the JetStream error code', () => {
    expect(interruptionReason({ code: '404', api_error: { code: 404, err_code: 10014, description: 'consumer not found' } })).toBe('consumer_not_found');
  });
});
