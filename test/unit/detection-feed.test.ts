import type { Registry } from 'prom-client';
import { defaultRateRules, type RateRules } from '../../core/detection/rules';
import type { CrossedTarget } from '../../core/detection/quiet';
import type { RateFlow } from '../../core/detection/traffic-class';
import { telemetryHeaderNames } from '../../core/telemetry-headers';
import { RateFeed } from '../../workers/detection/rate-feed';
import { batched, flow, seeded, t0 } from '../support/detection-flows';
import { FakeMessage, harness, rates, synFlood } from '../support/detection-sink';

describe('the detection consumer: the ack rule', () => {
  test('a message is acknowledged only once the watermark has closed every window its flows count in', async () => {
    const { sink } = harness();
    const first = new FakeMessage([flow({ ts: t0 + 500 })]);
    await sink.add(first);
    await sink.add(new FakeMessage([flow({ ts: t0 + 9_999 })]));
    expect(first.acked).toBe(false);
    await sink.add(new FakeMessage([flow({ ts: t0 + 10_000 })]));
    expect(first.acked).toBe(true);
  });

  test('held messages are kept alive with working() until they are acknowledged', async () => {
    const { sink } = harness();
    const held = new FakeMessage([flow({ ts: t0 })]);
    await sink.add(held);
    sink.keepAlive();
    sink.keepAlive();
    expect(held.workings).toBe(2);
    expect(held.acked).toBe(false);
  });

  test('when no flow comes for the lateness of wall time, the open windows are judged and the held messages acknowledged', async () => {
    const { sink, attacks, advanceClock } = harness();
    const flood = new FakeMessage(synFlood(3));
    await sink.add(flood);
    await sink.tick();
    expect(flood.acked).toBe(false);
    advanceClock(5_000);
    await sink.tick();
    expect(flood.acked).toBe(true);
    // The windows' attack is written only as they close (an early crossing writes its signal alone).
    expect(attacks.map((a) => [a.target, a.type])).toContainEqual(['203.0.113.9', 'syn_flood']);
  });

  test('a failed write acknowledges nothing and offers every held message again', async () => {
    const { sink, stored } = harness({ failWrites: () => true });
    const messages = batched(synFlood(12), seeded(7), 400).map((flows) => new FakeMessage(flows));
    for (const m of messages) await sink.add(m);
    expect(stored.size).toBe(0);
    expect(messages.filter((m) => m.acked).length).toBe(0);
    // The first write failed while the first messages were held: they are offered again; the later ones are held anew.
    expect(messages[0]!.naks).toBe(1);
  });
});

/** The flows in an arrival order that keeps each within 3 s of event time of the newest before it (under the 5 s lateness). */
function arrivalOrder(flows: RateFlow[], random: () => number): RateFlow[] {
  return flows
    .map((f) => ({ f, at: f.ts + random() * 3_000 }))
    .sort((a, b) => a.at - b.at)
    .map((x) => x.f);
}

async function outcome(messages: RateFlow[][]) {
  const h = harness();
  for (const flows of messages) await h.sink.add(new FakeMessage(flows));
  h.advanceClock(5_000);
  await h.sink.tick();
  const windows = [...new Map(h.attacks.map((a) => [a.event_id, a])).values()].sort((a, b) => (a.event_id < b.event_id ? -1 : 1));
  return { signals: [...h.stored.keys()].sort(), windows: windows.map((w) => [w.event_id, w.type, w.details]) };
}

describe('the detection consumer: windows reported before they close (detector version 2)', () => {
  test('a message whose flows make a host window cross stores and correlates its signal at once, without waiting for the window to close', async () => {
    const { sink, stored, attacks, recomputed } = harness();
    const flood = new FakeMessage(synFlood(3));
    await sink.add(flood);
    expect([...new Set([...stored.values()].map((s) => `${s.service} ${s.rule}`))]).toEqual(['203.0.113.9 rate.v2:host']);
    expect(recomputed).toContain('org1/203.0.113.9');
    expect([attacks.length, flood.acked]).toEqual([0, false]);
  });

  test("a window reported early has its attack written under the early signal's id once it closes, and its signal is not stored again", async () => {
    const { sink, stored, inserted, attacks, advanceClock } = harness();
    await sink.add(new FakeMessage(synFlood(3)));
    const early = [...stored.keys()].sort();
    advanceClock(5_000);
    await sink.tick();
    expect(attacks.map((a) => a.event_id).sort()).toEqual(early);
    expect(inserted.sort()).toEqual(early);
  });

  test('a window reported early is not looked up or correlated again when it closes: this holder stored and correlated its signal', async () => {
    const { sink, recomputed, lookups, advanceClock } = harness();
    await sink.add(new FakeMessage(synFlood(3)));
    const [correlated, lookedUp] = [recomputed.length, lookups.count];
    expect(correlated).toBeGreaterThan(0);
    advanceClock(5_000);
    await sink.tick();
    expect([recomputed.length, lookups.count]).toEqual([correlated, lookedUp]);
  });

  test('a signal another holder stored is correlated again, not stored again: that holder may have stopped before correlating it', async () => {
    const first = harness();
    await first.sink.add(new FakeMessage(synFlood(3)));
    const second = harness({ stored: first.stored });
    await second.sink.add(new FakeMessage(synFlood(3)));
    expect(second.inserted).toEqual([]);
    expect(second.recomputed).toContain('org1/203.0.113.9');
  });
});

describe('the detection consumer: determinism over the wiring', () => {
  const flows = [
    ...synFlood(12),
    ...synFlood(8, 150, t0 + 3_000).map((f) => ({ ...f, dst_ip: '2001:db8::9' })),
    ...Array.from({ length: 400 }, (_, i) => flow({ ts: t0 + i * 40, dst_ip: `203.0.113.${i % 50}`, protocol: 'udp', src_port: 53, packets: 1 })),
  ];

  test('the same flows give the same signals and attack details for any batching into messages and any order within the lateness', async () => {
    const expected = await outcome([[...flows].sort((a, b) => a.ts - b.ts)]);
    expect(expected.signals.length).toBeGreaterThan(10);
    for (let seed = 1; seed <= 15; seed++) {
      const random = seeded(seed);
      expect(await outcome(batched(arrivalOrder(flows, random), random, 300))).toEqual(expected);
    }
  });
});

describe('the detection consumer: rules versions', () => {
  test('a new rules version first closes and judges the windows counted under the previous one, and acknowledges their messages', () => {
    const feed = new RateFeed<FakeMessage>();
    const before = new FakeMessage(synFlood(4));
    feed.take('org1', { version: 1, rates }, before, before.flows);
    const after = new FakeMessage([flow({ ts: t0 + 4_500 })]);
    const step = feed.take('org1', { version: 2, rates: defaultRateRules }, after, after.flows);
    expect(step.ackable).toEqual([before]);
    expect(new Set(step.decisions.map((d) => d.rules_version))).toEqual(new Set([1]));
    expect(step.decisions.length).toBeGreaterThan(0);
  });
});

/** A counter's value for one label set. */
async function counted(registry: Registry, name: string, labels: Record<string, string>): Promise<number> {
  const values = (await registry.getSingleMetric(name)?.get())?.values ?? [];
  return values.filter((v) => Object.entries(labels).every(([k, l]) => v.labels[k] === l)).reduce((n, v) => n + v.value, 0);
}

describe('the detection consumer: rules versions and the end of an attack', () => {
  test('a new rules version carries the targets still crossing: their quiet is judged under the new version', () => {
    const feed = new RateFeed<FakeMessage>();
    const flood = new FakeMessage(synFlood(6));
    const first = feed.take('org1', { version: 1, rates: { ...rates, quiet_seconds: 60 } }, flood, flood.flows);
    const background = new FakeMessage(Array.from({ length: 30 }, (_, i) => flow({ ts: t0 + 6_000 + i * 1_000, dst_ip: '192.0.2.200' })));
    const then = feed.take('org1', { version: 2, rates: { ...rates, quiet_seconds: 10 } }, background, background.flows);
    expect([...first.quiet, ...then.quiet].map((q) => [q.org, q.quiet.target, q.quiet.quiet_seconds])).toEqual([['org1', '203.0.113.9', 10]]);
  });
});

describe('the detection consumer: refused messages', () => {
  test('a message whose rows are of another workspace than its subject is terminated and counted by reason, none of its flows counted', async () => {
    const { sink, stored, registry, advanceClock } = harness();
    const forged = new FakeMessage(synFlood(12), 'org1');
    Object.assign(forged, { subject: 'nettel.detect.flow.org2' });
    const headers: Record<string, string> = { [telemetryHeaderNames.kind]: 'flow', [telemetryHeaderNames.org]: 'org2' };
    Object.assign(forged, { headers: { get: (k: string) => headers[k] ?? '' } });
    await sink.add(forged);
    advanceClock(5_000);
    await sink.tick();
    expect([forged.termed, forged.acked, forged.naks]).toEqual([true, false, 0]);
    expect(await counted(registry, 'nettel_detection_messages_refused_total', { reason: 'org_mismatch' })).toBe(1);
    expect(stored.size).toBe(0);
  });

  test('a message on the subject of a workspace that does not exist is terminated and counted as unknown_workspace', async () => {
    const { sink, stored, registry } = harness();
    const message = new FakeMessage(synFlood(12), 'org_gone');
    await sink.add(message);
    expect(message.termed).toBe(true);
    expect(await counted(registry, 'nettel_detection_messages_refused_total', { reason: 'unknown_workspace' })).toBe(1);
    expect(stored.size).toBe(0);
  });

  test('refused messages arriving every second do not hold back the idle flush of a stopped flood', async () => {
    const { sink, attacks, advanceClock } = harness();
    const flood = new FakeMessage(synFlood(3));
    await sink.add(flood);
    for (let i = 0; i < 6; i++) {
      advanceClock(1_000);
      await sink.add(new FakeMessage([flow({ ts: t0 + 1 })], 'org_gone'));
      await sink.tick();
    }
    expect(flood.acked).toBe(true);
    // The windows' attack is written only as they close (an early crossing writes its signal alone).
    expect(attacks.map((a) => [a.target, a.type])).toContainEqual(['203.0.113.9', 'syn_flood']);
  });

  test("one workspace's flows going on do not hold back the idle flush of another's stopped flood", async () => {
    const { sink, attacks, advanceClock } = harness();
    const flood = new FakeMessage(synFlood(3));
    await sink.add(flood);
    for (let i = 0; i < 6; i++) {
      advanceClock(1_000);
      await sink.add(new FakeMessage([flow({ ts: t0 + i * 1_000 })], 'org_other'));
      await sink.tick();
    }
    expect(flood.acked).toBe(true);
    // The windows' attack is written only as they close (an early crossing writes its signal alone).
    expect(attacks.map((a) => [a.target, a.type])).toContainEqual(['203.0.113.9', 'syn_flood']);
  });
});

describe('the detection consumer: attacks that end', () => {
  const quietRates: RateRules = { ...rates, quiet_seconds: 10 };
  /** One flow a second to another address, under every bound: the event time goes on. */
  const background = (from: number, to: number) => Array.from({ length: (to - from) / 1000 }, (_, i) => flow({ ts: from + i * 1000, dst_ip: '192.0.2.200' }));

  test("a flood that stops resolves its target's incident once, after the quiet time of event time", async () => {
    const { sink, resolved } = harness({ rates: quietRates });
    await sink.add(new FakeMessage(synFlood(6)));
    await sink.add(new FakeMessage(background(t0 + 6_000, t0 + 15_000)));
    expect(resolved).toEqual([]);
    await sink.add(new FakeMessage(background(t0 + 15_000, t0 + 40_000)));
    await sink.add(new FakeMessage(background(t0 + 40_000, t0 + 60_000)));
    expect(resolved.map(([org, q]) => [org, q.target])).toEqual([['org1', '203.0.113.9']]);
  });

  test("a target whose incident was open when this holder began is resolved once quiet, though this holder never saw it cross", async () => {
    const crossing: CrossedTarget[] = [{ scope: 'host', target: '203.0.113.77', host_group: '', last_crossed_end: t0 }];
    const { sink, resolved } = harness({ rates: quietRates, crossing });
    await sink.add(new FakeMessage(background(t0, t0 + 30_000)));
    expect(resolved.map(([, q]) => [q.target, q.quiet_end])).toEqual([['203.0.113.77', t0 + 10_000]]);
  });
});
