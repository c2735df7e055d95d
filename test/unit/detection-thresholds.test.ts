import { RateDetector, type RateDecision } from '../../core/detection/detect';
import { crossedBounds, defaultRateRules, mayCross, rateRulesSchema, RateRuleBook, type RateRules, type RateThresholds } from '../../core/detection/rules';
import { counterSlots, ratesOf, trafficClasses, type RateFlow } from '../../core/detection/traffic-class';
import { hostPrefix, PrefixTable, prefixOfAddress } from '../../core/prefix-table';
import { flow, syn, t0 } from '../support/detection-flows';

/** Five seconds of flows at `pps` packets a second to each destination (one flow a second each). */
function steady(destinations: string[], pps: number, over: Partial<RateFlow> = {}): RateFlow[] {
  return Array.from({ length: 5 }, (_, s) => destinations.map((dst_ip) => flow({ ts: t0 + s * 1000, dst_ip, packets: pps, bytes: pps * 100, ...over }))).flat();
}

function decide(rules: RateRules, flows: RateFlow[]): RateDecision[] {
  const d = new RateDetector(rules);
  return [...d.add(flows), ...d.flush()];
}

/** The window that holds all five seconds: the one ending at t0 + 5 s. */
const atFullWindow = (ds: RateDecision[]) => ds.filter((d) => d.window_end === t0 + 5000);

const rules = (over: Partial<RateRules> = {}): RateRules => ({ ...defaultRateRules, thresholds: { total: { pps: 1000 } }, ...over });

describe('thresholds per workspace and host group', () => {
  test('a destination whose five-second average reaches the workspace threshold crosses it', () => {
    const [d] = atFullWindow(decide(rules(), steady(['203.0.113.9'], 1000)));
    expect(d).toMatchObject({ scope: 'host', target: '203.0.113.9', host_group: '', crossed: ['total.pps>=1000'] });
  });

  test('a destination just under the threshold does not cross it', () => {
    expect(decide(rules(), steady(['203.0.113.9'], 999))).toEqual([]);
  });

  test("a host group's thresholds replace the workspace's for its prefixes", () => {
    const r = rules({ host_groups: [{ name: 'web', prefixes: ['203.0.113.0/24'], thresholds: { total: { pps: 5000 } } }] });
    expect(decide(r, steady(['203.0.113.9'], 1000))).toEqual([]);
    expect(atFullWindow(decide(r, steady(['198.51.100.9'], 1000)))).toHaveLength(1);
  });

  test('the most specific host group wins', () => {
    const r = rules({
      host_groups: [
        { name: 'wide', prefixes: ['203.0.0.0/16'], thresholds: { total: { pps: 5000 } } },
        { name: 'narrow', prefixes: ['203.0.113.0/28'], thresholds: { total: { pps: 500 } } },
      ],
    });
    expect(atFullWindow(decide(r, steady(['203.0.113.9'], 600)))[0]).toMatchObject({ host_group: 'narrow', crossed: ['total.pps>=500'] });
  });

  test('an IPv6 host group judges IPv6 destinations', () => {
    const r = rules({ host_groups: [{ name: 'v6', prefixes: ['2001:db8::/48'], thresholds: { udp: { bps: 1_000_000 } } }] });
    expect(atFullWindow(decide(r, steady(['2001:db8::9'], 2000, { protocol: 'udp' })))[0]).toMatchObject({ host_group: 'v6', crossed: ['udp.bps>=1000000'] });
  });
});

describe('whitelists', () => {
  test("a whitelisted source's flows are not counted", () => {
    const r = rules({ whitelist: { sources: ['198.51.100.0/24'], destinations: [] } });
    expect(decide(r, steady(['203.0.113.9'], 5000, { src_ip: '198.51.100.7' }))).toEqual([]);
    expect(atFullWindow(decide(r, steady(['203.0.113.9'], 5000, { src_ip: '192.0.2.7' })))).toHaveLength(1);
  });

  test('a whitelisted destination never crosses', () => {
    const r = rules({ whitelist: { sources: [], destinations: ['203.0.113.9'] } });
    expect(decide(r, steady(['203.0.113.9'], 50_000))).toEqual([]);
  });
});

describe('the carpet detector', () => {
  const addresses = (n: number, base = '203.0.113.') => Array.from({ length: n }, (_, i) => `${base}${i + 1}`);
  const carpet = (over: Partial<RateRules['carpet']> = {}) => rules({ carpet: { ...defaultRateRules.carpet, min_addresses: 16, thresholds: { total: { pps: 8000 } }, ...over } });

  test('traffic over many addresses of a /24 crosses the carpet threshold while no address crosses its own', () => {
    const ds = atFullWindow(decide(carpet(), steady(addresses(20), 500)));
    expect(ds).toHaveLength(1);
    expect(ds[0]).toMatchObject({ scope: 'prefix', target: '203.0.113.0/24', type: 'carpet', addresses: 20, crossed: ['total.pps>=8000'] });
  });

  test('a prefix with fewer addresses than min_addresses does not cross', () => {
    expect(decide(carpet(), steady(addresses(15), 900))).toEqual([]);
  });

  test('a prefix one of whose addresses crosses on its own is left to that address', () => {
    const flows = [...steady(addresses(20), 500), ...steady(['203.0.113.200'], 1000)];
    expect(atFullWindow(decide(carpet(), flows)).map((d) => d.scope)).toEqual(['host']);
  });

  test('an IPv6 carpet is judged per /64', () => {
    const ds = atFullWindow(decide(carpet(), steady(addresses(20, '2001:db8:0:7::'), 500)));
    expect(ds[0]).toMatchObject({ scope: 'prefix', target: '2001:db8:0:7::/64' });
  });

  test("whitelisted destinations are left out of their prefix's count", () => {
    const r = carpet();
    r.whitelist = { sources: [], destinations: ['203.0.113.0/29'] };
    expect(decide(r, steady(addresses(20), 500))).toEqual([]);
  });
});

describe('the rules as the API takes them', () => {
  test('an empty body is the defaults', () => {
    expect(rateRulesSchema.parse({})).toEqual(defaultRateRules);
  });

  test('a threshold of an unknown class is refused', () => {
    expect(rateRulesSchema.safeParse({ thresholds: { smtp: { pps: 1 } } }).success).toBe(false);
  });

  test('a host group prefix that is not an address or prefix is refused', () => {
    expect(rateRulesSchema.safeParse({ host_groups: [{ name: 'a', prefixes: ['203.0.113.0/33'], thresholds: {} }] }).success).toBe(false);
  });

  test('two host groups of one name are refused', () => {
    const g = { name: 'a', prefixes: ['203.0.113.0/24'], thresholds: {} };
    expect(rateRulesSchema.safeParse({ host_groups: [g, g] }).success).toBe(false);
  });

  test('a carpet prefix length of IPv4 /32 is refused (that is a host)', () => {
    expect(rateRulesSchema.safeParse({ carpet: { ipv4_prefix_length: 32 } }).success).toBe(false);
  });

  test("a carpet prefix takes the carpet thresholds of the host group holding its network address", () => {
    const book = new RateRuleBook(rules({ host_groups: [{ name: 'g', prefixes: ['203.0.113.0/24'], thresholds: {}, carpet_thresholds: { udp: { pps: 1 } } }] }));
    expect(book.carpetThresholds('203.0.113.0/24')).toEqual({ group: 'g', thresholds: { udp: { pps: 1 } } });
    expect(book.carpetThresholds('198.51.100.0/24').group).toBe('');
  });
});

describe('prefixes of addresses', () => {
  test.each([
    ['203.0.113.77', 24, '203.0.113.0/24'],
    ['::ffff:203.0.113.77', 24, '203.0.113.0/24'],
    ['2001:db8:0:7:1:2:3:4', 64, '2001:db8:0:7::/64'],
    ['2001:db8::1', 128, '2001:db8::1/128'],
    ['2001:0:0:1::1', 48, '2001::/48'],
  ])('%s in a /%i is %s', (address, length, prefix) => {
    expect(prefixOfAddress(address, length === 128 ? 32 : length, length)).toBe(prefix);
  });

  test('an address is its own host prefix', () => {
    expect(hostPrefix('192.0.2.1')).toBe('192.0.2.1/32');
  });

  test('a prefix table finds the most specific prefix holding an address', () => {
    const table = new PrefixTable([{ prefix: '10.0.0.0/8', value: 'a' }, { prefix: '10.1.0.0/16', value: 'b' }]);
    expect([table.lookup('10.1.2.3'), table.lookup('10.2.0.1'), table.lookup('11.0.0.1')]).toEqual(['b', 'a', undefined]);
  });
});

test('version 1 names the type and the bounds crossed in the rule text with the detector version', () => {
  const detector = new RateDetector(rules(), undefined, { version: 1 });
  const flows = steady(['203.0.113.9'], 2000, { tcp_flags: syn });
  const [d] = atFullWindow([...detector.add(flows), ...detector.flush()]);
  expect(d!.rule).toBe('rate.v1:host:syn_flood:total.pps>=1000');
});

test("version 2's rule text names the version and scope only; the type and bounds crossed stay in the decision", () => {
  const [d] = atFullWindow(decide(rules(), steady(['203.0.113.9'], 2000, { tcp_flags: syn })));
  expect([d!.rule, d!.type, d!.crossed]).toEqual(['rate.v2:host', 'syn_flood', ['total.pps>=1000']]);
});

describe('the quick check before a destination is judged', () => {
  test('mayCross is true exactly when crossedBounds finds a bound broken, for any counters and thresholds', () => {
    let seed = 20261129;
    const next = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    const mismatches: string[] = [];
    for (let i = 0; i < 20_000; i++) {
      const counters = Float64Array.from({ length: counterSlots }, () => Math.floor(next() * 50_000));
      const thresholds: RateThresholds = {};
      for (const c of trafficClasses) {
        if (next() < 0.6) continue;
        thresholds[c] = { ...(next() < 0.5 ? { pps: 1 + Math.floor(next() * 10_000) } : {}), ...(next() < 0.5 ? { bps: 1 + Math.floor(next() * 80_000_000) } : {}), ...(next() < 0.5 ? { fps: 1 + Math.floor(next() * 10_000) } : {}) };
      }
      const seconds = 1 + Math.floor(next() * 5);
      if (mayCross(counters, seconds, thresholds) !== crossedBounds(ratesOf(counters, seconds), thresholds).length > 0) mismatches.push(`case ${i}`);
    }
    expect(mismatches).toEqual([]);
  });
});
