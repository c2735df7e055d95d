import { fingerprintRuleOf, hostRoute, isPlannable, mitigationOf, previewFilterOfMitigation, type ActionSpec } from '../../core/automation-plan';
import { mitigationOfPath } from '../../workers/mitigation/announced-paths';
import { mitigationPath } from '../../workers/mitigation/mitigations';
import type { Mitigation } from '../../core/mitigation';

const nextHop = { ipv4: '192.0.2.1', ipv6: '100::1' };
/** What the speaker reads back of what it was given: the plan must already be in that form, or the reconciler would flap. */
const readBack = (m: Mitigation) => mitigationOfPath(mitigationPath(m) as never);

describe('what a playbook action becomes for an incident', () => {
  test('a host route is the address with its full length, IPv6 in compressed lower case', () => {
    expect(hostRoute('198.51.100.7')).toBe('198.51.100.7/32');
    expect(hostRoute('2001:DB8:0:0::7')).toBe('2001:db8::7/128');
    expect(hostRoute('web-frontend')).toBeUndefined();
  });

  test('a blackhole acts on the host route with the default next hop of its family and the operator communities sorted, without BLACKHOLE itself', () => {
    expect(mitigationOf({ type: 'blackhole', duration_minutes: 10, communities: ['65010:2', '65535:666', '65010:1'], next_hop: null }, '198.51.100.7', nextHop)).toEqual({
      action: 'blackhole', destination: '198.51.100.7/32', nextHop: '192.0.2.1', communities: ['65010:1', '65010:2'],
    });
    expect(mitigationOf({ type: 'blackhole', duration_minutes: 10, communities: [], next_hop: null }, '2001:db8::7', nextHop)).toEqual({
      action: 'blackhole', destination: '2001:db8::7/128', nextHop: '100::1',
    });
  });

  test('a flowspec rule carries the action filter with its lists sorted and empty ones left out', () => {
    const m = mitigationOf(
      { type: 'flowspec_rate_limit', duration_minutes: 5, protocols: [17], source_ports: [], destination_ports: [443, 53], packet_length: { min: 0, max: 512 }, rate_bytes_per_second: 1_250_000.3 },
      '198.51.100.7',
      nextHop,
    );
    expect(m).toEqual({
      action: 'flowspec_rate_limit',
      match: { destination: '198.51.100.7/32', protocols: [17], destinationPorts: [53, 443], packetLength: { min: 0, max: 512 } },
      bytesPerSecond: Math.fround(1_250_000.3),
    });
  });

  test('a flowspec rule on an IPv6 destination acts on its host route', () => {
    expect(mitigationOf({ type: 'flowspec_discard', protocols: [17], destination_ports: [53] }, '2001:DB8:0:0::7', nextHop)).toEqual({
      action: 'flowspec_discard', match: { destination: '2001:db8::7/128', protocols: [17], destinationPorts: [53] },
    });
  });

  test('TCP flags are planned in bit order, each once', () => {
    const m = mitigationOf({ type: 'flowspec_discard', protocols: [6], tcp_flags: ['ack', 'syn', 'ack'] }, '198.51.100.7', nextHop);
    expect(m).toEqual({ action: 'flowspec_discard', match: { destination: '198.51.100.7/32', protocols: [6], tcpFlags: ['syn', 'ack'] } });
  });

  test.each<[string, Mitigation]>([
    ['a blackhole', mitigationOf({ type: 'blackhole', communities: ['65010:7'], next_hop: '192.0.2.9' }, '198.51.100.7', nextHop)!],
    ['an IPv6 blackhole', mitigationOf({ type: 'blackhole', next_hop: null }, '2001:db8::7', nextHop)!],
    ['a flowspec discard', mitigationOf({ type: 'flowspec_discard', protocols: [6, 17], source_ports: [123, 19] }, '198.51.100.7', nextHop)!],
    ['a flowspec rate limit', mitigationOf({ type: 'flowspec_rate_limit', destination_ports: [80], rate_bytes_per_second: 125_000_001 }, '198.51.100.7', nextHop)!],
    ['an IPv6 flowspec discard', mitigationOf({ type: 'flowspec_discard', protocols: [58, 17], packet_length: { min: 0, max: 128 } }, '2001:DB8::7', nextHop)!],
    ['an IPv6 flowspec rate limit', mitigationOf({ type: 'flowspec_rate_limit', source_ports: [123], rate_bytes_per_second: 1e9 }, '2001:db8:0:0:1::7', nextHop)!],
    ['a flowspec rule on TCP flags', mitigationOf({ type: 'flowspec_discard', tcp_flags: ['cwr', 'fin', 'urg', 'syn', 'ece', 'psh', 'rst', 'ack'] }, '198.51.100.7', nextHop)!],
    ['an IPv6 flowspec rule on TCP flags', mitigationOf({ type: 'flowspec_rate_limit', protocols: [6], tcp_flags: ['rst'], rate_bytes_per_second: 1000 }, '2001:db8::7', nextHop)!],
  ])('%s is planned in the form the speaker reads back', (_name, m) => {
    expect(readBack(m)).toEqual(m);
  });

  test('the webhook action and a destination that is no address announce nothing', () => {
    expect(mitigationOf({ type: 'webhook' }, '198.51.100.7', nextHop)).toBeUndefined();
    expect(mitigationOf({ type: 'blackhole' }, 'checkout', nextHop)).toBeUndefined();
  });

  /** What a run previews of an action: the filter of the mitigation it is planned as. */
  const previewFilterOf = (action: ActionSpec, address: string) => previewFilterOfMitigation(mitigationOf(action, address, nextHop)!);

  test('a preview of a flowspec rule narrows the destination flows by protocol label and ports; a blackhole matches them all', () => {
    expect(previewFilterOf({ type: 'flowspec_discard', protocols: [17, 47], source_ports: [123] }, '198.51.100.7')).toEqual({
      first: '0000:0000:0000:0000:0000:ffff:c633:6407', last: '0000:0000:0000:0000:0000:ffff:c633:6407', protocols: ['udp', 'gre'], sourcePorts: [123], destinationPorts: [], tcpFlagBits: 0, packetLength: null,
    });
    expect(previewFilterOf({ type: 'blackhole', protocols: [6] }, '198.51.100.7')).toMatchObject({ protocols: [], sourcePorts: [], destinationPorts: [] });
    expect(previewFilterOf({ type: 'flowspec_discard', protocols: [17], destination_ports: [53] }, '2001:db8::7')).toMatchObject({ first: '2001:0db8:0000:0000:0000:0000:0000:0007', last: '2001:0db8:0000:0000:0000:0000:0000:0007', protocols: ['udp'], destinationPorts: [53] });
  });

  test('a preview of a rule on TCP flags matches the TCP flows with every one of its flags set', () => {
    expect(previewFilterOf({ type: 'flowspec_discard', protocols: [], destination_ports: [80], tcp_flags: ['syn'] }, '198.51.100.7')).toMatchObject({
      protocols: ['tcp'], destinationPorts: [80], tcpFlagBits: 0x02,
    });
    expect(previewFilterOf({ type: 'flowspec_discard', protocols: [17, 6], tcp_flags: ['ack', 'syn'] }, '198.51.100.7')).toMatchObject({ protocols: ['tcp'], tcpFlagBits: 0x12 });
  });

  test('a preview of a rule on packet length matches the flows whose mean packet size lies in its range; a blackhole matches on neither', () => {
    expect(previewFilterOf({ type: 'flowspec_discard', protocols: [17], packet_length: { min: 0, max: 128 } }, '198.51.100.7')).toMatchObject({ protocols: ['udp'], packetLength: { min: 0, max: 128 } });
    expect(previewFilterOf({ type: 'blackhole', tcp_flags: ['syn'], packet_length: { min: 0, max: 128 } }, '198.51.100.7')).toMatchObject({ protocols: [], tcpFlagBits: 0, packetLength: null });
  });
});

describe('a fingerprint action planned', () => {
  const match = { destination: '198.51.100.7/32', protocols: [6], destinationPorts: [80], tcpFlags: ['syn' as const], packetLength: { min: 60, max: 60 } };

  test("becomes a Flowspec discard of the fingerprint's match, for the action's duration", () => {
    const rule = fingerprintRuleOf({ type: 'flowspec_fingerprint', duration_minutes: 15, attack_share: 0.9, baseline_share: 0.1 }, match);
    expect(rule).toEqual({ type: 'flowspec_discard', duration_minutes: 15, protocols: [6], source_ports: [], destination_ports: [80], tcp_flags: ['syn'], packet_length: { min: 60, max: 60 } });
    expect(mitigationOf(rule, '198.51.100.7', nextHop)).toEqual({ action: 'flowspec_discard', match });
  });

  test('is the one action a run must plan before it can carry it out', () => {
    expect(isPlannable({ type: 'flowspec_fingerprint' })).toBe(false);
    expect(['blackhole', 'flowspec_discard', 'flowspec_rate_limit', 'webhook'].every((type) => isPlannable({ type: type as 'blackhole' }))).toBe(true);
  });
});

describe("a planned mitigation's preview", () => {
  test("of a fingerprint's rule counts what the planned match matches, read from the mitigation alone", () => {
    const match = { destination: '198.51.100.7/32', protocols: [6], destinationPorts: [80], tcpFlags: ['syn' as const], packetLength: { min: 60, max: 60 } };
    expect(previewFilterOfMitigation({ action: 'flowspec_discard', match })).toMatchObject({ protocols: ['tcp'], sourcePorts: [], destinationPorts: [80], tcpFlagBits: 0x02, packetLength: { min: 60, max: 60 } });
  });

  test('of a Flowspec match with a source is none: a preview cannot narrow by it', () => {
    expect(previewFilterOfMitigation({ action: 'flowspec_discard', match: { destination: '198.51.100.7/32', source: '192.0.2.0/24' } })).toBeUndefined();
  });
});
