import { detectRates, RateDetector, rateDetectors } from '../../core/detection/detect';
import { fingerprint, protocolNumber } from '../../core/detection/fingerprint';
import { defaultRateRules } from '../../core/detection/rules';
import type { RateFlow } from '../../core/detection/traffic-class';
import { rateDetectorVersion, rateRule, versionOfRule } from '../../core/detection/version';
import { rateSignal } from '../../core/detection/signals';
import { derivedId } from '../../core/ids';
import type { Mitigation } from '../../core/mitigation';
import { flow, seeded, shuffled, syn, synAck, t0 } from '../support/detection-flows';

const random = seeded(35);
const port = () => 1024 + Math.floor(random() * 60_000);

/** A SYN flood on port 80 from random source ports, 60-byte packets. */
const synFlood: RateFlow[] = Array.from({ length: 200 }, (_, i) =>
  flow({ src_ip: `198.51.100.${i % 250}`, src_port: port(), dst_port: 80, tcp_flags: syn, packets: 50, bytes: 3000 }),
);
/** The destination's normal traffic: HTTPS with ACKs, 1000-byte packets, and DNS answers. */
const baseline: RateFlow[] = [
  ...Array.from({ length: 50 }, () => flow({ src_port: port(), dst_port: 443, tcp_flags: synAck | 0x10, packets: 20, bytes: 20_000 })),
  ...Array.from({ length: 20 }, () => flow({ protocol: 'udp', src_port: 53, dst_port: port(), packets: 1, bytes: 200 })),
];

describe('the fingerprint as a Flowspec match', () => {
  test('a SYN flood on port 80 gives protocol TCP, port 80, the SYN flag and its packet length', () => {
    const fp = fingerprint('203.0.113.9/32', synFlood, baseline);
    expect(fp.match).toEqual({ destination: '203.0.113.9/32', protocols: [6], destinationPorts: [80], tcpFlags: ['syn'], packetLength: { min: 60, max: 60 } });
    expect(fp).toMatchObject({ attack_share: 1, baseline_share: 0, within_bounds: true });
  });

  test('an NTP amplification gives UDP from source port 123, not its scattered destination ports', () => {
    const ntp = Array.from({ length: 100 }, () => flow({ protocol: 'udp', src_port: 123, dst_port: port(), packets: 10, bytes: 4680 }));
    expect(fingerprint('203.0.113.9/32', ntp, baseline).match).toEqual({ destination: '203.0.113.9/32', protocols: [17], sourcePorts: [123], packetLength: { min: 468, max: 468 } });
  });

  test('the match covers the set share of the attack, leaving out a stray tail', () => {
    const stray = Array.from({ length: 5 }, () => flow({ protocol: 'udp', src_port: port(), dst_port: 80, packets: 50, bytes: 3000 }));
    const fp = fingerprint('203.0.113.9/32', [...synFlood, ...stray], baseline);
    expect(fp.match.protocols).toEqual([6]);
    expect(fp.attack_share).toBeCloseTo(200 / 205);
  });

  test('an attack that looks like the normal traffic gives a rule outside the baseline bound', () => {
    const lookalike = Array.from({ length: 100 }, () => flow({ protocol: 'udp', src_port: 53, dst_port: port(), packets: 1, bytes: 200 }));
    const dnsOnly = baseline.filter((f) => f.protocol === 'udp');
    const fp = fingerprint('203.0.113.9/32', lookalike, dnsOnly);
    expect(fp.baseline_share).toBe(1);
    expect(fp.within_bounds).toBe(false);
  });

  test('ports spread over more than eight values are not matched', () => {
    const spread = Array.from({ length: 100 }, (_, i) => flow({ protocol: 'udp', src_port: port(), dst_port: 1000 + (i % 20), packets: 10, bytes: 5000 }));
    const fp = fingerprint('203.0.113.9/32', spread, baseline);
    expect(fp.match.destinationPorts).toBeUndefined();
    expect(fp.match.sourcePorts).toBeUndefined();
  });

  test('the same flows in any order give the same fingerprint', () => {
    expect(fingerprint('203.0.113.9/32', shuffled(synFlood, seeded(3)), shuffled(baseline, seeded(4)))).toEqual(fingerprint('203.0.113.9/32', synFlood, baseline));
  });

  test('an ICMPv6 flood on an IPv6 host is matched on protocol 58', () => {
    const icmp6 = Array.from({ length: 10 }, () => flow({ dst_ip: '2001:db8::9', protocol: 'ipv6-icmp', src_port: 0, dst_port: 0, packets: 100, bytes: 100 * 1280 }));
    expect(fingerprint('2001:db8::9/128', icmp6, []).match).toEqual({ destination: '2001:db8::9/128', protocols: [58], packetLength: { min: 1280, max: 1280 } });
  });

  test('the match is the Flowspec shape a mitigation announces', () => {
    const mitigation: Mitigation = { action: 'flowspec_discard', match: fingerprint('203.0.113.9/32', synFlood, baseline).match };
    expect(mitigation.match.destination).toBe('203.0.113.9/32');
  });

  test('protocols are named by IANA number', () => {
    expect([protocolNumber('tcp'), protocolNumber('17'), protocolNumber('ipv6-icmp'), protocolNumber('gre'), protocolNumber('pim')]).toEqual([6, 17, 58, 47, undefined]);
  });
});

describe('the detector version', () => {
  test('a rate rule names the version it was decided under', () => {
    expect(versionOfRule('rate.v1:host:syn_flood:total.pps>=1000')).toBe(1);
  });

  test('a version 2 rule names its version and scope only', () => {
    expect([versionOfRule('rate.v2:host'), rateRule(2, 'prefix', 'carpet', ['total.pps>=1'])]).toEqual([2, 'rate.v2:prefix']);
  });

  test("a version 1 signal's id is made as before, from its rule too, so the replays of version 1 incidents find the ids they recorded", () => {
    const d = { detector_version: 1, scope: 'host' as const, target: '203.0.113.9', window_end: t0, rule: 'rate.v1:host:syn_flood:total.pps>=1000' };
    expect(rateSignal('org1', d, 0).event_id).toBe(derivedId('evt', 'rate', 'org1', 1, 'host', '203.0.113.9', t0, d.rule));
  });

  test("a version 2 signal's id leaves the rule out: what a window is reported as does not change it", () => {
    const d = { detector_version: 2, scope: 'host' as const, target: '203.0.113.9', window_end: t0, rule: 'rate.v2:host' };
    expect(rateSignal('org1', d, 0).event_id).toBe(rateSignal('org1', { ...d, rule: 'rate.v2:host:anything' }, 0).event_id);
  });

  test("today's detector rule is not a rate rule", () => {
    expect(versionOfRule('traffic_volume>=1000000000B/min')).toBeUndefined();
  });

  test('the current version is runnable for a replay', () => {
    expect(Object.keys(rateDetectors).map(Number)).toContain(rateDetectorVersion);
  });

  test.each([1, 2])('a replay of version %i on the stored flows decides what its streaming detector decided', (version) => {
    const rules = { ...defaultRateRules, thresholds: { tcp_syn: { pps: 1000 } } };
    const flows = synFlood.map((f, i) => ({ ...f, ts: t0 + i * 50 }));
    const live = new RateDetector(rules, undefined, { version });
    const decided = [...live.add(flows.slice(0, 120)), ...live.add(flows.slice(120)), ...live.flush()];
    expect(decided.length).toBeGreaterThan(0);
    expect(decided.every((d) => d.detector_version === version)).toBe(true);
    expect(detectRates(version, shuffled(flows, seeded(9)), rules)).toEqual(decided);
  });

  test('a version no longer runnable gives no decisions rather than another version\'s', () => {
    expect(detectRates(999, synFlood, defaultRateRules)).toBeUndefined();
  });
});
