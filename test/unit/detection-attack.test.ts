import { attackDetails } from '../../core/detection/attack-details';
import { classify, shapeOf } from '../../core/detection/classify';
import { RateDetector, type RateDecision } from '../../core/detection/detect';
import { defaultRateRules } from '../../core/detection/rules';
import { rateDetectorVersion } from '../../core/detection/version';
import { trafficClasses, type Rates, type TrafficClass } from '../../core/detection/traffic-class';
import { flow, syn, synAck, t0 } from '../support/detection-flows';

/** Rates whose packets a second are these per class (total = the given total). */
function shape(total: number, pps: Partial<Record<TrafficClass, number>>): Rates {
  const out = {} as Rates;
  for (const c of trafficClasses) out[c] = { pps: c === 'total' ? total : (pps[c] ?? 0), bps: 0, fps: 0 };
  return out;
}

describe('the attack type from the window shape', () => {
  test('more than 90 % SYN packets is a syn_flood', () => {
    expect(shapeOf(shape(100, { tcp: 100, tcp_syn: 91 }))).toBe('syn_flood');
  });

  test('exactly 90 % SYN packets is not a syn_flood', () => {
    expect(shapeOf(shape(100, { tcp: 100, tcp_syn: 90 }))).toBe('unknown');
  });

  test('more than half ICMP is an icmp_flood', () => {
    expect(shapeOf(shape(100, { icmp: 51 }))).toBe('icmp_flood');
  });

  test('fragments come before UDP: mostly fragmented UDP is ip_fragmentation', () => {
    expect(shapeOf(shape(100, { udp: 100, fragments: 60 }))).toBe('ip_fragmentation');
  });

  test('UDP mostly from port 123 is ntp_amplification, not udp_flood', () => {
    expect(shapeOf(shape(100, { udp: 100, ntp: 80 }))).toBe('ntp_amplification');
  });

  test.each([
    ['dns', 'dns_amplification'], ['ssdp', 'ssdp_amplification'], ['memcached', 'memcached_amplification'],
    ['cldap', 'cldap_amplification'], ['chargen', 'chargen_amplification'],
  ] as const)('UDP mostly from the %s port is %s', (vector, type) => {
    expect(shapeOf(shape(100, { udp: 100, [vector]: 80 }))).toBe(type);
  });

  test('UDP from many ports is a udp_flood', () => {
    expect(shapeOf(shape(100, { udp: 100, dns: 20, ntp: 20 }))).toBe('udp_flood');
  });

  test('a mix with no dominant class is unknown', () => {
    expect(shapeOf(shape(100, { tcp: 40, udp: 40, icmp: 20 }))).toBe('unknown');
  });

  test('a window with no packets is unknown', () => {
    expect(shapeOf(shape(0, {}))).toBe('unknown');
  });

  test('a prefix-wide crossing is a carpet whose vector is its shape', () => {
    expect(classify(shape(100, { udp: 100 }), 'prefix')).toEqual({ type: 'carpet', vector: 'udp_flood' });
  });
});

describe("the attack's details", () => {
  const sources = Array.from({ length: 12 }, (_, i) => `198.51.100.${i + 1}`);
  const attack = sources.map((src_ip, i) =>
    flow({ src_ip, ts: t0 + (i % 3) * 1000, packets: 100 * (i + 1), bytes: 60 * 100 * (i + 1), tcp_flags: syn, src_port: 1024 + i, exporter: '192.0.2.1', in_if: i % 2 }),
  );
  const decisions = (): RateDecision[] => {
    const d = new RateDetector({ ...defaultRateRules, thresholds: { total: { pps: 100 } } });
    return [...d.add(attack), ...d.flush()];
  };

  test('top sources are the ten with the most packets, largest first', () => {
    const top = attackDetails(attack, decisions()).top_sources;
    expect(top).toHaveLength(10);
    expect(top[0]).toEqual({ address: '198.51.100.12', packets: 1200, bytes: 72_000, flows: 1 });
    expect(top[9]!.address).toBe('198.51.100.3');
  });

  test('top sources among many rank by packets, then bytes, then address, as a sort of all of them would', () => {
    // Few distinct packet and byte counts: most sources tie on packets, many on bytes too.
    const many = Array.from({ length: 300 }, (_, i) => flow({ src_ip: `203.0.113.${i % 250}`, ts: t0, packets: 1 + ((i * 7) % 4), bytes: 100 * (1 + ((i * 11) % 3)) }));
    const volumes = new Map<string, { packets: number; bytes: number; flows: number }>();
    for (const f of many) {
      const v = volumes.get(f.src_ip) ?? { packets: 0, bytes: 0, flows: 0 };
      volumes.set(f.src_ip, { packets: v.packets + f.packets, bytes: v.bytes + f.bytes, flows: v.flows + 1 });
    }
    const sorted = [...volumes]
      .sort(([ka, a], [kb, b]) => b.packets - a.packets || b.bytes - a.bytes || (ka < kb ? -1 : 1))
      .slice(0, 10)
      .map(([address, v]) => ({ address, ...v }));
    expect(attackDetails(many, []).top_sources).toEqual(sorted);
  });

  test('the same flows in another order give the same details', () => {
    expect(attackDetails([...attack].reverse(), decisions())).toEqual(attackDetails(attack, decisions()));
  });

  test('the protocol breakdown gives each class its share of the packets', () => {
    const mixed = [...attack, flow({ protocol: 'udp', packets: 7800, bytes: 7800 * 500, tcp_flags: undefined })];
    const protocols = attackDetails(mixed, []).protocols;
    expect(protocols.map((p) => [p.class, p.share])).toEqual([['tcp', 0.5], ['tcp_syn', 0.5], ['udp', 0.5]]);
  });

  test('packet sizes bin each flow by its mean packet size', () => {
    const sizes = attackDetails([...attack, flow({ packets: 2, bytes: 3000, tcp_flags: synAck })], []).packet_sizes;
    expect(sizes.map((b) => [b.min, b.max, b.flows])).toEqual([[0, 63, 12], [1500, 65535, 1]]);
  });

  test('the exporters and interfaces that saw it are listed with their packets', () => {
    expect(attackDetails(attack, []).exporters.map((e) => [e.exporter, e.in_if, e.packets])).toEqual([['192.0.2.1', 1, 4200], ['192.0.2.1', 0, 3600]]);
  });

  test('peak and current rates come from the windows: the highest and the latest', () => {
    const ds = decisions();
    const details = attackDetails(attack, ds);
    expect(details.peak.pps).toBe(Math.max(...ds.map((d) => d.rates.total.pps)));
    expect(details.current).toEqual(ds[ds.length - 1]!.rates.total);
    expect(details.current.pps).toBeLessThan(details.peak.pps);
  });

  test('the top destination ports list each port once', () => {
    expect(attackDetails(attack, []).top_destination_ports).toEqual([{ port: 443, packets: 7800, bytes: 468_000, flows: 12 }]);
  });
});

test('each decision of a window names the flood and the detector version', () => {
  const d = new RateDetector({ ...defaultRateRules, thresholds: { udp: { pps: 100 } } });
  const all = [...d.add([flow({ protocol: 'udp', src_port: 123, packets: 5000, ts: t0 })]), ...d.flush()];
  expect(all.map((x) => [x.type, x.detector_version])).toEqual(Array(5).fill(['ntp_amplification', rateDetectorVersion]));
});
