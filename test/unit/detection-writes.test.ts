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

  test('a quiet target resolves after the decisions counted before it and before those counted after it', async () => {
    const done: string[] = [];
    const writes = gate();
    const writer = new DecisionWriter<FakeMessage>(
      { maxQueuedSteps: 100 },
      {
        write: async (decisions) => {
          await writes.closed;
          done.push(`write ${decisions.map((d) => d.decision.target).join(',')}`);
        },
        resolve: (q) => (done.push(`resolve ${q.quiet.target}`), Promise.resolve()),
        reset: () => [],
        metrics: detectionMetrics(new Registry()),
        log: createLogger('silent', 'test'),
      },
    );
    await writer.add(step({ decisions: [decision('a')] }));
    await writer.add(step({ decisions: [decision('b')] }));
    await writer.add(step({ decisions: [decision('c')], quiet: [quiet('x')] }));
    await writer.add(step({ decisions: [decision('d')] }));
    writes.open();
    await writer.idle();
    expect(done).toEqual(['write a', 'write b,c', 'resolve x', 'write d']);
  });
});
