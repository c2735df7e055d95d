import { judged } from '../../core/detection/detect';
import { RateWindows, defaultWindowSettings } from '../../core/detection/rate-window';
import { RateRuleBook, crossedBounds, defaultRateRules, type RateRules } from '../../core/detection/rules';
import { ratesOf, type RateFlow } from '../../core/detection/traffic-class';
import { flow, seeded, syn, t0 } from '../support/detection-flows';

/**
 * A window whose whole traffic may break no bound of the book is closed
 * without its sums (RateWindows' mayMatter, the book's mayAnyCross), and one
 * that may holds only the destinations its buckets' peaks leave able to reach
 * a host's bound (mayReachHost): normal traffic, below every threshold, costs
 * no judging. These tests hold that this leaves out nothing a decision or a
 * carpet incident's quiet time reads.
 */
const rules: RateRules = {
  ...defaultRateRules,
  thresholds: { total: { pps: 3_000 } },
  host_groups: [
    { name: 'edge', prefixes: ['203.0.113.128/25'], thresholds: { udp: { bps: 2_000_000 } } },
    { name: 'peering', prefixes: ['203.0.114.0/24'], thresholds: { total: { pps: 3_000 } }, carpet_thresholds: { tcp_syn: { pps: 400 } } },
  ],
  carpet: { ...defaultRateRules.carpet, min_addresses: 4, thresholds: { total: { fps: 8 } } },
};

/**
 * Two minutes of traffic to 16 addresses of two /24s, each second of one
 * shape: quiet, UDP heavy in bytes (the edge group's bound), a packet flood
 * (the workspace's), many small flows (the carpet's) or a spread SYN flood
 * (the peering group's carpet). Every bound is on another measure, so a
 * window may matter to one alone.
 */
function traffic(random: () => number): RateFlow[] {
  const out: RateFlow[] = [];
  const dst = () => `203.0.${random() < 0.5 ? 113 : 114}.${Math.floor(random() * 8) * 32 + 1}`;
  for (let s = 0; s < 120; s++) {
    const at = (k: number) => t0 + s * 1000 + k * 20;
    const shape = Math.floor(random() * 5);
    if (shape === 0) out.push(flow({ ts: at(0), dst_ip: dst(), packets: 3, bytes: 200 }));
    if (shape === 1) for (let k = 0; k < 4; k++) out.push(flow({ ts: at(k), dst_ip: '203.0.113.161', protocol: 'udp', src_port: 53, packets: 2, bytes: 600_000 + Math.floor(random() * 600_000) }));
    if (shape === 2) out.push(flow({ ts: at(0), dst_ip: dst(), packets: 10_000 + Math.floor(random() * 10_000), bytes: 1_000 }));
    if (shape === 3) for (let k = 0; k < 12; k++) out.push(flow({ ts: at(k), dst_ip: dst(), packets: 1, bytes: 60 }));
    if (shape === 4) for (let k = 0; k < 8; k++) out.push(flow({ ts: at(k), dst_ip: `203.0.114.${k * 32 + 1}`, packets: 400, bytes: 24_000, tcp_flags: syn }));
  }
  return out;
}

type Bounds = ConstructorParameters<typeof RateWindows>[1];

function closedWindows(flows: RateFlow[], bounds: Bounds = {}) {
  const windows = new RateWindows(defaultWindowSettings, bounds);
  windows.add(flows);
  return [...windows.advance(), ...windows.flush()];
}

const book = new RateRuleBook(rules);
/** Every destination summed in every window, and the carpet prefixes. */
const everything: Bounds = { prefixOf: (dst) => book.prefixOf(dst) };
/** What the detectors leave out: quiet windows, and destinations the peaks rule out. */
const pruned: Bounds = {
  ...everything,
  mayMatter: (total, seconds) => book.mayAnyCross(total, seconds),
  mayReachHost: (packets, bytes, flows, seconds) => book.mayReachHost(packets, bytes, flows, seconds),
};

describe('windows too quiet to matter', () => {
  test('a window whose whole traffic may break no bound holds no destination', () => {
    const [w] = closedWindows([flow({ packets: 10 })], pruned);
    expect(w!.byDestination.size).toBe(0);
  });

  test('a window whose whole traffic may break a bound holds every destination when the peaks are not asked', () => {
    const flows = [flow({ packets: 20_000 }), flow({ dst_ip: '203.0.113.10', packets: 1 })];
    const [w] = closedWindows(flows, { mayMatter: (total, seconds) => book.mayAnyCross(total, seconds) });
    expect([...w!.byDestination.keys()].sort()).toEqual(['203.0.113.10', '203.0.113.9']);
  });

  test('a window holds only the destinations its buckets\' peaks leave able to reach a host\'s bound', () => {
    const flows = [flow({ packets: 20_000 }), flow({ dst_ip: '203.0.113.10', packets: 1 })];
    const [w] = closedWindows(flows, pruned);
    expect([...w!.byDestination.keys()]).toEqual(['203.0.113.9']);
  });

  test('a window holds every destination when more than one may reach a host\'s bound', () => {
    const flows = ['203.0.113.9', '203.0.113.10', '203.0.113.11'].map((dst_ip) => flow({ dst_ip, packets: 20_000 }));
    const [w] = closedWindows(flows, pruned);
    expect(w!.byDestination.size).toBe(3);
  });

  test('a carpet prefix\'s sums leave out whitelisted destinations', () => {
    const whitelisting = new RateRuleBook({ ...rules, whitelist: { sources: [], destinations: ['203.0.113.10'] } });
    const flows = ['203.0.113.9', '203.0.113.10'].map((dst_ip) => flow({ dst_ip, packets: 7 }));
    const [w] = closedWindows(flows, { prefixOf: (dst) => whitelisting.prefixOf(dst) });
    expect(w!.prefixes.get('203.0.113.0/24')!.counters[0]).toBe(7);
  });

  test('leaving them out changes no decision and no carpet sum that crosses its bounds', () => {
    for (let seed = 1; seed <= 10; seed++) {
      const flows = traffic(seeded(seed));
      const allWindows = closedWindows(flows, everything);
      const keptWindows = closedWindows(flows, pruned);
      const all = allWindows.map((w) => judged(w, book));
      const kept = keptWindows.map((w) => judged(w, book));
      expect(kept.map((j) => j.decisions)).toEqual(all.map((j) => j.decisions));
      const crossingCarpets = (js: typeof all) =>
        js.map((j) => [...j.prefixes].filter(([prefix, p]) => crossedBounds(ratesOf(p.counters, 5), book.carpetThresholds(prefix).thresholds).length > 0));
      expect(crossingCarpets(kept)).toEqual(crossingCarpets(all));
      expect(all.some((j) => j.decisions.length > 0)).toBe(true);
      expect(kept.some((j, i) => j.prefixes.size === 0 && all[i]!.prefixes.size > 0)).toBe(true);
      expect(keptWindows.some((w, i) => w.byDestination.size > 0 && w.byDestination.size < allWindows[i]!.byDestination.size)).toBe(true);
    }
  });
});
