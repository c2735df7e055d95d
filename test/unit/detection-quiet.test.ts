import { RateDetector, type RateDecision } from '../../core/detection/detect';
import type { RateQuiet } from '../../core/detection/quiet';
import { defaultRateRules, rateRulesSchema, type RateRules } from '../../core/detection/rules';
import type { RateFlow } from '../../core/detection/traffic-class';
import { batched, flow, seeded, shuffled, syn, t0 } from '../support/detection-flows';

const rules = (over: Partial<RateRules> = {}): RateRules => ({ ...defaultRateRules, thresholds: { total: { pps: 100 } }, quiet_seconds: 10, ...over });

/** `perSecond` one-packet SYN flows a second to `dst` over [from, to) of event time. */
const flood = (dst: string, from: number, to: number, perSecond = 200): RateFlow[] =>
  Array.from({ length: ((to - from) / 1000) * perSecond }, (_, i) =>
    flow({ ts: from + Math.floor((i * 1000) / perSecond), dst_ip: dst, src_port: 1024 + (i % 50_000), dst_port: 80, packets: 1, bytes: 60, tcp_flags: syn }),
  );
/** One flow a second to another address, well under every bound: the event time goes on. */
const background = (from: number, to: number): RateFlow[] => Array.from({ length: (to - from) / 1000 }, (_, i) => flow({ ts: from + i * 1000, dst_ip: '192.0.2.200' }));

function run(detector: RateDetector, batches: RateFlow[][], end = false): { decisions: RateDecision[]; quiet: RateQuiet[] } {
  const decisions: RateDecision[] = [];
  const quiet: RateQuiet[] = [];
  for (const b of batches) {
    decisions.push(...detector.add(b));
    quiet.push(...detector.takeQuiet());
  }
  if (end) decisions.push(...detector.flush());
  quiet.push(...detector.takeQuiet());
  return { decisions, quiet };
}
const lastCrossing = (decisions: RateDecision[], target: string) => Math.max(...decisions.filter((d) => d.target === target).map((d) => d.window_end));

describe('rate detectors: the end of an attack', () => {
  test('a destination that crossed and then stays below every bound for the quiet time is reported quiet once, at its last crossing plus the quiet time', () => {
    const { decisions, quiet } = run(new RateDetector(rules()), [flood('203.0.113.9', t0, t0 + 8_000), background(t0 + 8_000, t0 + 40_000)]);
    const last = lastCrossing(decisions, '203.0.113.9');
    expect(quiet).toEqual([{ scope: 'host', target: '203.0.113.9', host_group: '', last_crossed_end: last, quiet_end: last + 10_000, quiet_seconds: 10, detector_version: 2 }]);
  });

  test('a destination is not reported quiet while the windows of its quiet time are not all closed', () => {
    const detector = new RateDetector(rules());
    const { decisions } = run(detector, [flood('203.0.113.9', t0, t0 + 8_000)]);
    const last = lastCrossing([...decisions, ...detector.flush()], '203.0.113.9');
    // The watermark (newest event time less the 5 s lateness) reaches one second short of the quiet end.
    expect(run(detector, [background(t0 + 8_000, last + 10_000 + 4_000)]).quiet).toEqual([]);
  });

  test('a crossing within the quiet time starts the quiet time again from the later crossing', () => {
    const { decisions, quiet } = run(new RateDetector(rules()), [
      flood('203.0.113.9', t0, t0 + 8_000),
      background(t0 + 8_000, t0 + 15_000),
      flood('203.0.113.9', t0 + 15_000, t0 + 20_000),
      background(t0 + 20_000, t0 + 60_000),
    ]);
    const last = lastCrossing(decisions, '203.0.113.9');
    expect(last).toBeGreaterThan(t0 + 15_000);
    expect(quiet.map((q) => [q.target, q.quiet_end])).toEqual([['203.0.113.9', last + 10_000]]);
  });

  test('a destination that never crossed is never reported quiet', () => {
    expect(run(new RateDetector(rules()), [background(t0, t0 + 60_000)], true).quiet).toEqual([]);
  });

  test('the quiet targets are the same for any order and batching of the same flows within the lateness', () => {
    const flows = [...flood('203.0.113.9', t0, t0 + 8_000), ...flood('2001:db8::9', t0 + 3_000, t0 + 9_000), ...background(t0, t0 + 40_000)];
    const expected = run(new RateDetector(rules()), [[...flows].sort((a, b) => a.ts - b.ts)], true).quiet;
    expect(expected.map((q) => q.target)).toEqual(['203.0.113.9', '2001:db8::9']);
    for (let seed = 1; seed <= 10; seed++) {
      const random = seeded(seed);
      // Shuffled within each 2-second slice of event time: no flow more than the lateness behind the newest.
      const slices = new Map<number, RateFlow[]>();
      for (const f of flows) slices.set(Math.floor((f.ts - t0) / 2_000), [...(slices.get(Math.floor((f.ts - t0) / 2_000)) ?? []), f]);
      const arrival = [...slices.keys()].sort((a, b) => a - b).flatMap((k) => shuffled(slices.get(k)!, random));
      expect(run(new RateDetector(rules()), batched(arrival, random, 300), true).quiet).toEqual(expected);
    }
  });

  test("a carpet's prefix is not quiet while its summed rates stay over the carpet bound, though one of its destinations crosses alone", () => {
    const carpet = { ...defaultRateRules.carpet, min_addresses: 4, thresholds: { total: { pps: 300 } } };
    const spread = (from: number, to: number) => [0, 1, 2, 3, 4, 5].flatMap((i) => flood(`203.0.113.${i + 10}`, from, to, 150));
    const detector = new RateDetector(rules({ thresholds: { total: { pps: 1_000 } }, carpet }));
    const first = run(detector, [spread(t0, t0 + 8_000)]);
    expect(first.decisions.some((d) => d.scope === 'prefix')).toBe(true);
    // The carpet goes on, and one destination now crosses on its own: from then on the prefix makes no decision, but is not quiet.
    const then = run(detector, [[...spread(t0 + 8_000, t0 + 40_000), ...flood('203.0.113.10', t0 + 8_000, t0 + 40_000, 1_500)]]);
    const hostFrom = Math.min(...then.decisions.filter((d) => d.target === '203.0.113.10').map((d) => d.window_end));
    expect(then.decisions.filter((d) => d.scope === 'prefix' && d.window_end >= hostFrom)).toEqual([]);
    expect(then.quiet.filter((q) => q.scope === 'prefix')).toEqual([]);
  });

  test("a target remembered from a predecessor's crossing is reported quiet from that crossing when none follows", () => {
    const detector = new RateDetector(rules());
    detector.remember({ scope: 'host', target: '203.0.113.9', host_group: '', last_crossed_end: t0 + 2_000 });
    expect(run(detector, [background(t0, t0 + 30_000)]).quiet.map((q) => [q.target, q.quiet_end])).toEqual([['203.0.113.9', t0 + 12_000]]);
  });

  test('the rate rules take a quiet time of 60 seconds when none is given, and refuse one under a second', () => {
    expect(rateRulesSchema.parse({}).quiet_seconds).toBe(60);
    expect(rateRulesSchema.safeParse({ quiet_seconds: 0 }).success).toBe(false);
  });
});
