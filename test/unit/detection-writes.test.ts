import { Registry } from 'prom-client';
import type { RateQuiet } from '../../core/detection/quiet';
import { createLogger } from '../../observability/logger';
import { DecisionWriter } from '../../workers/detection/decision-writer';
import { detectionMetrics } from '../../workers/detection/detection-metrics';
import type { FeedDecision, FeedStep } from '../../workers/detection/rate-feed';
import { flow, t0 } from '../support/detection-flows';
import { FakeMessage, harness, synFlood } from '../support/detection-sink';

/** A flood on its own destination: its first message makes a window cross early, so its step has a signal to write. */
const floodOn = (address: string) => new FakeMessage(synFlood(3).map((f) => ({ ...f, dst_ip: address })));

/** A gate the writes wait at until the test opens it. */
function gate() {
  let open!: () => void;
  const closed = new Promise<void>((resolve) => (open = resolve));
  return { closed, open };
}

describe('the detection consumer: writes beside the counting', () => {
  test('a message is counted while the write of the one before it is under way', async () => {
    const writes = gate();
    const h = harness({ writesHeld: writes.closed });
    await h.pipelined.add(floodOn('203.0.113.1'));
    await h.pipelined.add(floodOn('203.0.113.2'));
    expect(h.stored.size).toBe(0);
    writes.open();
    await h.pipelined.flush();
    expect([...new Set([...h.stored.values()].map((s) => s.service))].sort()).toEqual(['203.0.113.1', '203.0.113.2']);
  });

  test('the steps that queued behind a write are written together, in one insert of their signals', async () => {
    const writes = gate();
    const h = harness({ writesHeld: writes.closed });
    for (const address of ['203.0.113.1', '203.0.113.2', '203.0.113.3']) await h.pipelined.add(floodOn(address));
    writes.open();
    await h.pipelined.flush();
    // The first message's write was under way when the other two were counted.
    expect(h.signalInserts).toHaveLength(2);
    expect(h.recomputed.filter((r) => r.endsWith('203.0.113.3'))).toHaveLength(1);
  });

  test('a failed write acknowledges none of the steps queued behind it and offers their messages again', async () => {
    const writes = gate();
    let failures = 0;
    // Only the first write fails: a step written after it would acknowledge what the failure offered again.
    const h = harness({ writesHeld: writes.closed, failWrites: () => failures++ === 0 });
    // The third closes the first two's windows: its step, queued behind the failing write, would acknowledge them.
    const messages = [floodOn('203.0.113.1'), floodOn('203.0.113.2'), new FakeMessage([flow({ ts: t0 + 20_000 })])];
    for (const m of messages) await h.pipelined.add(m);
    writes.open();
    await h.pipelined.flush();
    expect(messages.map((m) => [m.acked, m.naks])).toEqual([[false, 1], [false, 1], [false, 1]]);
  });

  test('counting waits for the writes once as many steps as the bound queue behind the write under way', async () => {
    const writes = gate();
    const h = harness({ writesHeld: writes.closed, maxQueuedSteps: 2 });
    await h.pipelined.add(floodOn('203.0.113.1'));
    await h.pipelined.add(floodOn('203.0.113.2'));
    let counted = false;
    const third = h.pipelined.add(floodOn('203.0.113.3')).then(() => (counted = true));
    await new Promise((resolve) => setImmediate(resolve));
    expect(counted).toBe(false);
    writes.open();
    await third;
    expect(counted).toBe(true);
  });
});

describe('the decision writer', () => {
  const decision = (target: string) => ({ org: 'org1', rules_version: 1, decision: { target } }) as unknown as FeedDecision;
  const quiet = (target: string) => ({ org: 'org1', quiet: { target } as unknown as RateQuiet });
  const step = (parts: Partial<FeedStep<FakeMessage>>): FeedStep<FakeMessage> => ({ decisions: [], early: [], quiet: [], ackable: [], late: 0, untracked: 0, ...parts });

  /** A writer whose writes and resolutions wait at gates and are logged in `done`. */
  function writer(opts: { writes: Promise<void>; resolutions?: Promise<void>; failResolve?: boolean }) {
    const done: string[] = [];
    const w = new DecisionWriter<FakeMessage>(
      { maxQueuedSteps: 100 },
      {
        write: async (decisions) => {
          await opts.writes;
          done.push(`write ${decisions.map((d) => d.decision.target).join(',')}`);
        },
        resolve: async (q) => {
          await opts.resolutions;
          if (opts.failResolve) throw new Error('the resolution failed');
          done.push(`resolve ${q.quiet.target}`);
        },
        reset: () => [],
        metrics: detectionMetrics(new Registry()),
        log: createLogger('silent', 'test'),
      },
    );
    return { w, done };
  }
  const message = () => new FakeMessage([]);

  test("a quiet target resolves after the decisions counted before it, and its own decisions counted after it wait for its resolution", async () => {
    const writes = gate();
    const { w, done } = writer({ writes: writes.closed });
    await w.add(step({ decisions: [decision('a')] }));
    await w.add(step({ decisions: [decision('b')] }));
    await w.add(step({ decisions: [decision('c')], quiet: [quiet('x')] }));
    await w.add(step({ decisions: [decision('x')] }));
    writes.open();
    await w.idle();
    expect(done).toEqual(['write a', 'write b,c', 'resolve x', 'write x']);
  });

  test("another target's decisions are written while a quiet target resolves", async () => {
    const resolutions = gate();
    const { w, done } = writer({ writes: Promise.resolve(), resolutions: resolutions.closed });
    await w.add(step({ decisions: [decision('a')], quiet: [quiet('x')] }));
    await w.add(step({ decisions: [decision('b')] }));
    await new Promise((resolve) => setImmediate(resolve));
    expect(done).toEqual(['write a', 'write b']);
    resolutions.open();
    await w.idle();
    expect(done).toEqual(['write a', 'write b', 'resolve x']);
  });

  test("a step's messages are acknowledged once its quiet targets resolved, not when its decisions are written", async () => {
    const resolutions = gate();
    const { w } = writer({ writes: Promise.resolve(), resolutions: resolutions.closed });
    const [quietStep, other] = [message(), message()];
    await w.add(step({ decisions: [decision('a')], quiet: [quiet('x')], ackable: [quietStep] }));
    await w.add(step({ decisions: [decision('b')], ackable: [other] }));
    await new Promise((resolve) => setImmediate(resolve));
    expect([quietStep.acked, other.acked]).toEqual([false, true]);
    resolutions.open();
    await w.idle();
    expect(quietStep.acked).toBe(true);
  });

  test('a failed resolution offers its step and the steps queued behind it again', async () => {
    const writes = gate();
    const { w } = writer({ writes: writes.closed, failResolve: true });
    const messages = [message(), message(), message()];
    await w.add(step({ decisions: [decision('a')], quiet: [quiet('x')], ackable: [messages[0]!] }));
    await w.add(step({ decisions: [decision('x')], ackable: [messages[1]!] }));
    await w.add(step({ decisions: [decision('b')], ackable: [messages[2]!] }));
    writes.open();
    await w.idle();
    expect(messages.map((m) => [m.acked, m.naks])).toEqual([
      [false, 1],
      [false, 1],
      [false, 1],
    ]);
  });
});
