import type { Incident } from '../../core/correlation';
import { RateDetector } from '../../core/detection/detect';
import { incidentAttack } from '../../core/detection/incident-attack';
import { defaultRateRules, type RateRules } from '../../core/detection/rules';
import { rateSignal } from '../../core/detection/signals';
import { recomputeEvents } from '../../core/webhook-events';
import { flow, syn, synAck, t0 } from '../support/detection-flows';

/** A host crosses at 1,000 packets a second: 5,000 packets in a 5-second window. */
const rules = (over: Partial<RateRules> = {}): RateRules => ({ ...defaultRateRules, thresholds: { total: { pps: 1000 } }, ...over });
const host = '203.0.113.9';
const ends = (from: number, to: number) => Array.from({ length: (to - from) / 1000 + 1 }, (_, i) => from + i * 1000);

describe('detector version 2: windows that will cross are reported before they close', () => {
  test('a host window whose running sums reach a bound is reported as soon as the flows that make it cross are counted', () => {
    const detector = new RateDetector(rules());
    expect(detector.add([flow({ packets: 5000 })])).toEqual([]);
    expect(detector.takeEarly()).toEqual(
      ends(t0 + 1000, t0 + 5000).map((window_end) => ({ detector_version: 2, scope: 'host', target: host, host_group: '', window_end, rule: 'rate.v2:host' })),
    );
  });

  test('a window is not reported while its running sums stay below every bound', () => {
    const detector = new RateDetector(rules());
    detector.add([flow({ packets: 4999 })]);
    expect(detector.takeEarly()).toEqual([]);
    detector.add([flow({ ts: t0 + 1500, packets: 1 })]);
    expect(detector.takeEarly().map((c) => c.window_end)).toEqual(ends(t0 + 2000, t0 + 5000));
  });

  test('each window is reported early at most once, however many more flows reach it', () => {
    const detector = new RateDetector(rules());
    detector.add([flow({ packets: 5000 })]);
    detector.takeEarly();
    detector.add([flow({ ts: t0 + 100, packets: 5000 })]);
    expect(detector.takeEarly()).toEqual([]);
  });

  test("the early report and the closed window's decision are one signal: the same id and rule", () => {
    const detector = new RateDetector(rules());
    detector.add([flow({ packets: 5000, tcp_flags: syn })]);
    const early = detector.takeEarly().map((c) => rateSignal('org1', c, 1));
    const closed = detector.flush().map((d) => rateSignal('org1', d, 2));
    expect(early.map((s) => [s.event_id, s.rule, s.ts])).toEqual(closed.map((s) => [s.event_id, s.rule, s.ts]));
  });

  test('a window closed by the flows of the same batch is decided, not reported early', () => {
    const detector = new RateDetector(rules());
    const decided = detector.add([flow({ packets: 5000 }), flow({ ts: t0 + 20_000, dst_ip: '192.0.2.1' })]);
    expect(decided.map((d) => d.window_end)).toEqual(ends(t0 + 1000, t0 + 5000));
    expect(detector.takeEarly()).toEqual([]);
  });

  test('a carpet is not reported early; it is decided once its window closes', () => {
    const carpet = { ...defaultRateRules.carpet, min_addresses: 2, thresholds: { total: { pps: 1000 } } };
    const detector = new RateDetector(rules({ carpet }));
    detector.add(Array.from({ length: 10 }, (_, i) => flow({ dst_ip: `203.0.113.${i}`, packets: 500 })));
    expect(detector.takeEarly()).toEqual([]);
    expect(new Set(detector.flush().map((d) => d.scope))).toEqual(new Set(['prefix']));
  });

  test('a whitelisted destination is not reported early', () => {
    const detector = new RateDetector(rules({ whitelist: { sources: [], destinations: [host] } }));
    detector.add([flow({ packets: 5000 })]);
    expect(detector.takeEarly()).toEqual([]);
  });

  test("a host group's destination is reported early by its group's thresholds, not the workspace's", () => {
    const detector = new RateDetector(rules({ host_groups: [{ name: 'web', prefixes: ['203.0.113.0/24'], thresholds: { total: { pps: 2000 } } }] }));
    detector.add([flow({ packets: 5000 }), flow({ dst_ip: '198.51.100.9', packets: 5000 })]);
    expect(new Set(detector.takeEarly().map((c) => c.target))).toEqual(new Set(['198.51.100.9']));
    detector.add([flow({ ts: t0 + 100, packets: 5000 })]);
    expect(new Set(detector.takeEarly().map((c) => [c.target, c.host_group].join(' ')))).toEqual(new Set([`${host} web`]));
  });

  test("a class's bound is reached early by that class's sums only", () => {
    const detector = new RateDetector(rules({ thresholds: { tcp_syn: { pps: 1000 } } }));
    detector.add([flow({ packets: 5000, tcp_flags: synAck })]);
    expect(detector.takeEarly()).toEqual([]);
    detector.add([flow({ ts: t0 + 100, packets: 5000, tcp_flags: syn })]);
    expect(detector.takeEarly().length).toBe(5);
  });

  test('a flood among many destinations of ordinary traffic is reported early', () => {
    const detector = new RateDetector(rules());
    const ordinary = Array.from({ length: 2000 }, (_, i) => flow({ ts: t0 + (i % 1000), dst_ip: `10.0.${i >> 8}.${i % 256}`, packets: 3 }));
    detector.add([...ordinary, ...Array.from({ length: 10 }, (_, i) => flow({ ts: t0 + 900 + i, packets: 500 }))]);
    expect(new Set(detector.takeEarly().map((c) => c.target))).toEqual(new Set([host]));
  });

  test('a destination overtaken in a bucket by a larger one is still reported early once its own sums cross', () => {
    const detector = new RateDetector(rules());
    detector.add([flow({ packets: 3000 }), flow({ dst_ip: '198.51.100.9', packets: 6000 })]);
    detector.takeEarly();
    detector.add([flow({ ts: t0 + 1000, packets: 2000 })]);
    expect(detector.takeEarly().map((c) => [c.target, c.window_end])).toEqual(ends(t0 + 2000, t0 + 5000).map((end) => [host, end]));
  });

  test('version 1 reports nothing early', () => {
    const detector = new RateDetector(rules(), undefined, { version: 1 });
    detector.add([flow({ packets: 5000 })]);
    expect(detector.takeEarly()).toEqual([]);
    expect(detector.flush().length).toBe(5);
  });
});

describe('an incident opened by an early crossing, before any of its windows closed', () => {
  const opened: Incident = {
    id: 'inc_00000000000000000001', org_id: 'org_a', service: host, environment: 'network', region: 'global', severity: 'high', state: 'open',
    source: 'deterministic_engine', rule: 'rate.v2:host', escalations: [], first_seen: t0 + 4999, last_seen: t0 + 4999, signal_count: 1,
    kinds: ['flow'], max_latency_ms: 0, total_bytes: 0, version: 1, rules_version: 1,
  };

  test('has no attack yet, and its incident.opened event carries none', () => {
    expect(incidentAttack([])).toBeUndefined();
    const [event] = recomputeEvents([{ incident: opened, superseded: false }], new Map(), 1);
    expect([event!.type, 'attack' in (event!.data as object)]).toEqual(['incident.opened', false]);
  });
});
