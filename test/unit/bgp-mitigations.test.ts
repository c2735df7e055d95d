import { mitigationOfPath } from '../../workers/mitigation/announced-paths';
import type { Mitigation } from '../../core/mitigation';
import { InvalidMitigationError, mitigationPath } from '../../workers/mitigation/mitigations';

/**
 * What the BGP speaker adapter sends GoBGP for a mitigation, and how it reads
 * a path back: plain data both ways, checked without a speaker.
 */
const blackhole: Mitigation = { action: 'blackhole', destination: '198.51.100.7/32', nextHop: '192.0.2.1', communities: ['65001:42'] };
const blackhole6: Mitigation = { action: 'blackhole', destination: '2001:db8::7/128', nextHop: '2001:db8::1' };
const discard: Mitigation = { action: 'flowspec_discard', match: { destination: '198.51.100.0/24', source: '203.0.113.9/32', protocols: [17], sourcePorts: [53], packetLength: { min: 0, max: 1500 } } };
const rateLimit: Mitigation = { action: 'flowspec_rate_limit', match: { destination: '198.51.100.0/24', destinationPorts: [443] }, bytesPerSecond: 1_000_000 };
const discard6: Mitigation = { action: 'flowspec_discard', match: { destination: '2001:db8::/64', source: '2001:db8:ffff::9/128', protocols: [17], destinationPorts: [53] } };
const synFlood: Mitigation = { action: 'flowspec_rate_limit', match: { destination: '198.51.100.7/32', protocols: [6], tcpFlags: ['syn', 'ack'] }, bytesPerSecond: 125_000 };

type Rule = { '@type': string; type?: number; offset?: number; items?: Array<{ op: number; value: number }> };
const rulesOf = (m: Mitigation) => (mitigationPath(m).nlri as { rules: Rule[] }).rules;
/** A path whose flowspec rules are changed as a speaker might hold them. */
function withRules(m: Mitigation, change: (rules: Rule[]) => Rule[]) {
  const path = mitigationPath(m) as { nlri: { rules: Rule[] }; pattrs: object[] };
  return { nlri: { ...path.nlri, rules: change(path.nlri.rules) }, pattrs: path.pattrs };
}

/** As GoBGP answers ListPath through proto-loader: proto3 leaves zero values out. */
function withoutZeros(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutZeros);
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== 0).map(([k, v]) => [k, withoutZeros(v)]));
  return value;
}

describe('mitigations as GoBGP paths', () => {
  test.each<[string, Mitigation]>([
    ['an IPv4 blackhole', blackhole],
    ['an IPv6 blackhole', blackhole6],
    ['a flowspec discard', discard],
    ['a flowspec rate limit', rateLimit],
    ['an IPv6 flowspec discard', discard6],
    ['a flowspec rule on TCP flags', synFlood],
  ])('%s reads back from its path as the mitigation it came from', (_name, m) => {
    expect(mitigationOfPath(withoutZeros(mitigationPath(m)) as never)).toEqual(m);
  });

  test('an RTBH route carries BLACKHOLE first, then the operator’s communities', () => {
    const attrs = mitigationPath(blackhole).pattrs as Array<{ '@type': string; communities?: number[] }>;
    const communities = attrs.find((a) => a['@type'].endsWith('.CommunitiesAttribute'))?.communities;
    expect(communities).toEqual([65535 * 65536 + 666, 65001 * 65536 + 42]);
  });

  test('an IPv6 RTBH route names its next hop in MP_REACH_NLRI', () => {
    const attrs = mitigationPath(blackhole6).pattrs as Array<{ '@type': string; next_hops?: string[] }>;
    expect(attrs.find((a) => a['@type'].endsWith('.MpReachNLRIAttribute'))?.next_hops).toEqual(['2001:db8::1']);
  });

  test('an IPv6 flowspec rule goes in the IPv6 Flowspec family with whole prefixes (offset 0) and the unspecified next hop', () => {
    const path = mitigationPath(discard6) as { family: object; pattrs: Array<{ '@type': string; family?: object; next_hops?: string[] }> };
    expect(path.family).toEqual({ afi: 'AFI_IP6', safi: 'SAFI_FLOW_SPEC_UNICAST' });
    expect(rulesOf(discard6).filter((r) => r['@type'].endsWith('.FlowSpecIPPrefix')).map((r) => [r.type, r.offset])).toEqual([[1, 0], [2, 0]]);
    const reach = path.pattrs.find((a) => a['@type'].endsWith('.MpReachNLRIAttribute'));
    expect(reach).toMatchObject({ family: { afi: 'AFI_IP6', safi: 'SAFI_FLOW_SPEC_UNICAST' }, next_hops: ['::'] });
  });

  test('TCP flags are one bitmask item with the match bit: every listed flag set', () => {
    const flags = rulesOf(synFlood).find((r) => r.type === 9);
    expect(flags?.items).toEqual([{ op: 0x01, value: 0x02 | 0x10 }]);
    expect(rulesOf(synFlood).map((r) => r.type)).toEqual([1, 3, 9]);
  });

  test('TCP flags read back in bit order whatever end-of-list and length bits the speaker sets on the operator', () => {
    const asAnswered = withRules(synFlood, (rules) => rules.map((r) => (r.type === 9 ? { ...r, items: [{ op: 0x81, value: 0x12 }] } : r)));
    expect(mitigationOfPath(asAnswered as never)).toEqual(synFlood);
  });

  test('a TCP flags component that is not one match item, or a prefix from an offset, is not read as a mitigation', () => {
    const any = withRules(synFlood, (rules) => rules.map((r) => (r.type === 9 ? { ...r, items: [{ op: 0x80, value: 0x12 }] } : r)));
    const not = withRules(synFlood, (rules) => rules.map((r) => (r.type === 9 ? { ...r, items: [{ op: 0x83, value: 0x12 }] } : r)));
    const offset = withRules(discard6, (rules) => rules.map((r) => (r.type === 1 ? { ...r, offset: 8 } : r)));
    for (const path of [any, not, offset]) expect(mitigationOfPath(path as never)).toBeUndefined();
  });

  test('a unicast route without BLACKHOLE is not read as a mitigation', () => {
    const path = mitigationPath(blackhole) as { nlri: object; pattrs: Array<{ '@type': string }> };
    expect(mitigationOfPath({ nlri: path.nlri, pattrs: path.pattrs.filter((a) => !a['@type'].endsWith('.CommunitiesAttribute')) } as never)).toBeUndefined();
  });

  test.each<[string, Mitigation]>([
    ['not a host route', { action: 'blackhole', destination: '198.51.100.0/24', nextHop: '192.0.2.1' }],
    ['not an IP prefix', { action: 'blackhole', destination: 'example.org', nextHop: '192.0.2.1' }],
    ['is not an IPv4 address', { action: 'blackhole', destination: '198.51.100.7', nextHop: '2001:db8::1' }],
    ['not ASN:VALUE', { action: 'blackhole', destination: '198.51.100.7', nextHop: '192.0.2.1', communities: ['70000:1'] }],
    ['not of one IP version', { action: 'flowspec_discard', match: { destination: '2001:db8::/64', source: '203.0.113.9/32' } }],
    ['is not one of fin, syn, rst, psh, ack, urg, ece, cwr', { action: 'flowspec_discard', match: { destination: '198.51.100.0/24', tcpFlags: ['syn', 'xmas'] } } as unknown as Mitigation],
    ['not an integer from 0 to 65535', { action: 'flowspec_discard', match: { destination: '198.51.100.0/24', destinationPorts: [70000] } }],
    ['not a range', { action: 'flowspec_discard', match: { destination: '198.51.100.0/24', packetLength: { min: 100, max: 10 } } }],
    ['is a discard', { action: 'flowspec_rate_limit', match: { destination: '198.51.100.0/24' }, bytesPerSecond: 0 }],
    ['not a number of bytes per second', { action: 'flowspec_rate_limit', match: { destination: '198.51.100.0/24' }, bytesPerSecond: -1 }],
    ['unknown mitigation action', { action: 'nullroute' } as unknown as Mitigation],
  ])('a wrong mitigation is refused before anything is sent, saying why: %s', (reason, m) => {
    expect(() => mitigationPath(m)).toThrow(InvalidMitigationError);
    expect(() => mitigationPath(m)).toThrow(reason);
  });
});

describe('paths the speaker holds that are no mitigation of ours', () => {
  const any = (name: string, fields: object) => ({ '@type': `type.googleapis.com/apipb.${name}`, ...fields });
  test.each<[string, object]>([
    ['an empty answer', {}],
    ['a unicast route learnt from a router, without BLACKHOLE', { nlri: any('IPAddressPrefix', { prefix: '203.0.113.0', prefix_len: 24 }), pattrs: [any('CommunitiesAttribute', { communities: [65001 * 65536 + 1] })] }],
    ['a flowspec rule without a destination', { nlri: any('FlowSpecNLRI', { rules: [any('FlowSpecComponent', { type: 3, items: [{ op: 1, value: 17 }] })] }), pattrs: [any('ExtendedCommunitiesAttribute', { communities: [any('TrafficRateExtended', { asn: 0, rate: 0 })] })] }],
    ['a flowspec rule without a traffic rate', { nlri: any('FlowSpecNLRI', { rules: [any('FlowSpecIPPrefix', { type: 1, prefix: '198.51.100.7', prefix_len: 32 })] }), pattrs: [] }],
    ['an NLRI of an unknown type', { nlri: any('LabeledVPNIPAddressPrefix', { prefix: '10.0.0.0', prefix_len: 8 }), pattrs: [] }],
  ])('%s reads as no mitigation, so the reconciler never takes it for one', (_name, path) => {
    expect(mitigationOfPath(path as never)).toBeUndefined();
  });
});
