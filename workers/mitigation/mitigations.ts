import net from 'node:net';
import { tcpFlagNames, type FlowMatch, type Mitigation } from '../../core/mitigation';
import { parsePrefix as prefixOf } from '../../core/mitigation-policy';

/**
 * What a BGP speaker announces for a mitigation, and how it reads back.
 * Pure: plain data in, GoBGP API paths (as @grpc/proto-loader takes them,
 * `google.protobuf.Any` written as `{'@type', ...fields}`) out.
 */

/** A mitigation the speaker cannot express: refused before anything is sent. */
export class InvalidMitigationError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'InvalidMitigationError';
  }
}

/** RFC 7999's well-known BLACKHOLE community. */
export const blackholeCommunity = '65535:666';

const typeUrl = (name: string) => `type.googleapis.com/apipb.${name}`;
const any = (name: string, fields: object) => ({ '@type': typeUrl(name), ...fields });

export interface GobgpFamily {
  afi: 'AFI_IP' | 'AFI_IP6';
  safi: 'SAFI_UNICAST' | 'SAFI_FLOW_SPEC_UNICAST';
}
export const ipv4Unicast: GobgpFamily = { afi: 'AFI_IP', safi: 'SAFI_UNICAST' };
export const ipv6Unicast: GobgpFamily = { afi: 'AFI_IP6', safi: 'SAFI_UNICAST' };
export const ipv4Flowspec: GobgpFamily = { afi: 'AFI_IP', safi: 'SAFI_FLOW_SPEC_UNICAST' };
/** RFC 8956: IPv6 Flowspec, its own family. */
export const ipv6Flowspec: GobgpFamily = { afi: 'AFI_IP6', safi: 'SAFI_FLOW_SPEC_UNICAST' };
/** The families a mitigation may be announced in, which a neighbour is configured for. */
export const mitigationFamilies = [ipv4Unicast, ipv6Unicast, ipv4Flowspec, ipv6Flowspec];

export interface GobgpPath {
  family: GobgpFamily;
  nlri: object;
  pattrs: object[];
}

function parseCommunity(text: string): number {
  const match = /^(\d{1,5}):(\d{1,5})$/.exec(text);
  const high = Number(match?.[1]);
  const low = Number(match?.[2]);
  if (!match || high > 0xffff || low > 0xffff) throw new InvalidMitigationError(`community ${JSON.stringify(text)} is not ASN:VALUE with both under 65536`);
  return high * 0x10000 + low;
}

export const formatCommunity = (value: number) => `${Math.floor(value / 0x10000)}:${value % 0x10000}`;

/** A prefix, core/mitigation-policy.ts's reading of it; a bare address is its host route. */
function parsePrefix(text: string, what: string): { prefix: string; length: number; version: 4 | 6 } {
  const parsed = prefixOf(text.includes('/') ? text : `${text}/${net.isIPv6(text) ? 128 : 32}`);
  if (!parsed) throw new InvalidMitigationError(`${what} ${JSON.stringify(text)} is not an IP prefix`);
  return { prefix: parsed.address, length: parsed.length, version: parsed.family === 'ipv4' ? 4 : 6 };
}

function blackholePath(m: Extract<Mitigation, { action: 'blackhole' }>): GobgpPath {
  const host = parsePrefix(m.destination, 'blackhole destination');
  if (host.length !== (host.version === 4 ? 32 : 128)) throw new InvalidMitigationError(`blackhole destination ${m.destination} is not a host route (/32 or /128)`);
  if (net.isIP(m.nextHop) !== host.version) throw new InvalidMitigationError(`next hop ${JSON.stringify(m.nextHop)} is not an IPv${host.version} address`);
  const communities = [blackholeCommunity, ...(m.communities ?? []).filter((c) => c !== blackholeCommunity)].map(parseCommunity);
  const family = host.version === 4 ? ipv4Unicast : ipv6Unicast;
  const nlri = any('IPAddressPrefix', { prefix: host.prefix, prefix_len: host.length });
  // IPv6 carries its next hop in MP_REACH_NLRI (RFC 4760); IPv4 in NEXT_HOP.
  const nextHop =
    host.version === 4 ? any('NextHopAttribute', { next_hop: m.nextHop }) : any('MpReachNLRIAttribute', { family, next_hops: [m.nextHop], nlris: [nlri] });
  return { family, nlri, pattrs: [any('OriginAttribute', { origin: 0 }), nextHop, any('CommunitiesAttribute', { communities })] };
}

/** RFC 8955 numeric operators, as GoBGP takes them (it sets the length and end-of-list bits itself). */
const op = { eq: 0x01, gtEq: 0x03, and: 0x40, ltEq: 0x05 } as const;

/** RFC 8955 bitmask operators: `match` asks for every bit of the value set (without it, any one of them); `not` inverts. */
export const bitmaskOp = { match: 0x01, not: 0x02 } as const;

function tcpFlags(names: readonly string[] | undefined): Array<{ op: number; value: number }> | undefined {
  if (!names || names.length === 0) return undefined;
  let value = 0;
  for (const name of names) {
    const index = (tcpFlagNames as readonly string[]).indexOf(name);
    if (index < 0) throw new InvalidMitigationError(`tcp flag ${JSON.stringify(name)} is not one of ${tcpFlagNames.join(', ')}`);
    value |= 1 << index;
  }
  // One item with the match bit: packets with all of these flags set, whatever the others.
  return [{ op: bitmaskOp.match, value }];
}

function numbers(values: number[] | undefined, max: number, what: string): Array<{ op: number; value: number }> | undefined {
  if (!values || values.length === 0) return undefined;
  for (const v of values) if (!Number.isInteger(v) || v < 0 || v > max) throw new InvalidMitigationError(`${what} ${v} is not an integer from 0 to ${max}`);
  return values.map((value) => ({ op: op.eq, value }));
}

function packetLength(range: FlowMatch['packetLength']): Array<{ op: number; value: number }> | undefined {
  if (!range) return undefined;
  const { min, max } = range;
  if (!Number.isInteger(min) || !Number.isInteger(max) || min < 0 || max > 0xffff || min > max) {
    throw new InvalidMitigationError(`packet length ${min}..${max} is not a range within 0..65535`);
  }
  return [{ op: op.gtEq, value: min }, { op: op.and | op.ltEq, value: max }];
}

/**
 * The components in RFC 8955's type order (1 destination, 2 source, 3
 * protocol (IPv6: next header), 5/6 ports, 9 TCP flags, 10 packet length),
 * and the family they go in: IPv4, or IPv6 (RFC 8956, whose prefixes carry
 * an offset: 0 here, the whole prefix).
 */
function flowspecRules(match: FlowMatch): { family: GobgpFamily; rules: object[] } {
  const destination = parsePrefix(match.destination, 'flowspec destination');
  const source = match.source === undefined ? undefined : parsePrefix(match.source, 'flowspec source');
  if (source && source.version !== destination.version) throw new InvalidMitigationError(`flowspec source ${match.source} and destination ${match.destination} are not of one IP version`);
  const prefix = (type: number, p: { prefix: string; length: number }) =>
    any('FlowSpecIPPrefix', { type, prefix: p.prefix, prefix_len: p.length, ...(destination.version === 6 ? { offset: 0 } : {}) });
  const rules: object[] = [prefix(1, destination)];
  if (source) rules.push(prefix(2, source));
  const components: Array<[number, Array<{ op: number; value: number }> | undefined]> = [
    [3, numbers(match.protocols, 255, 'protocol')],
    [5, numbers(match.destinationPorts, 0xffff, 'destination port')],
    [6, numbers(match.sourcePorts, 0xffff, 'source port')],
    [9, tcpFlags(match.tcpFlags)],
    [10, packetLength(match.packetLength)],
  ];
  for (const [type, items] of components) if (items) rules.push(any('FlowSpecComponent', { type, items }));
  return { family: destination.version === 4 ? ipv4Flowspec : ipv6Flowspec, rules };
}

/** Traffic-rate 0 discards (RFC 8955 section 7.3); any other rate polices to that many bytes per second. */
function flowspecPath(match: FlowMatch, bytesPerSecond: number): GobgpPath {
  if (!Number.isFinite(bytesPerSecond) || bytesPerSecond < 0) throw new InvalidMitigationError(`rate ${bytesPerSecond} is not a number of bytes per second`);
  const { family, rules } = flowspecRules(match);
  const nlri = any('FlowSpecNLRI', { rules });
  const rate = any('ExtendedCommunitiesAttribute', { communities: [any('TrafficRateExtended', { asn: 0, rate: bytesPerSecond })] });
  // GoBGP answers "nexthop not found" to a flowspec path without an MP_REACH_NLRI next hop, though RFC 8955 ignores it: the unspecified address of the family.
  const reach = any('MpReachNLRIAttribute', { family, next_hops: [family === ipv4Flowspec ? '0.0.0.0' : '::'], nlris: [nlri] });
  return { family, nlri, pattrs: [any('OriginAttribute', { origin: 0 }), rate, reach] };
}

export function mitigationPath(m: Mitigation): GobgpPath {
  switch (m.action) {
    case 'blackhole':
      return blackholePath(m);
    case 'flowspec_discard':
      return flowspecPath(m.match, 0);
    case 'flowspec_rate_limit':
      if (m.bytesPerSecond === 0) throw new InvalidMitigationError('a rate limit of 0 bytes/s is a discard: use flowspec_discard');
      return flowspecPath(m.match, m.bytesPerSecond);
    default:
      throw new InvalidMitigationError(`unknown mitigation action ${JSON.stringify((m as { action: unknown }).action)}`);
  }
}
