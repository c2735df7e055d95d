import { tcpFlagNames, type FlowMatch, type Mitigation, type TcpFlag } from '../../core/mitigation';
import { bitmaskOp, blackholeCommunity, formatCommunity } from './mitigations';

/**
 * Reads the paths a speaker holds back into mitigations: what `listAnnounced`
 * returns, so a reconciler can compare it with what should be active. Paths
 * that are no mitigation of ours (a route learnt from a router, a unicast
 * route without BLACKHOLE) read as undefined.
 */
type AnyMessage = { '@type'?: string } & Record<string, unknown>;

const typeOf = (message: AnyMessage | undefined) => message?.['@type']?.split('.').pop();
const find = (messages: AnyMessage[], type: string) => messages.find((m) => typeOf(m) === type);

/** proto3 leaves zero values out of what it decodes: an absent number is 0. */
const num = (value: unknown) => Number(value ?? 0);

export interface ListedPath {
  nlri?: AnyMessage;
  pattrs?: AnyMessage[];
}

function blackholeOf(nlri: AnyMessage, pattrs: AnyMessage[]): Mitigation | undefined {
  const values = (find(pattrs, 'CommunitiesAttribute')?.communities as number[] | undefined) ?? [];
  const communities = values.map(formatCommunity);
  if (!communities.includes(blackholeCommunity)) return undefined;
  const nextHop = (find(pattrs, 'NextHopAttribute')?.next_hop as string | undefined) ?? (find(pattrs, 'MpReachNLRIAttribute')?.next_hops as string[] | undefined)?.[0];
  const others = communities.filter((c) => c !== blackholeCommunity);
  return {
    action: 'blackhole',
    destination: `${String(nlri.prefix)}/${num(nlri.prefix_len)}`,
    nextHop: nextHop ?? '',
    ...(others.length > 0 ? { communities: others } : {}),
  };
}

type Item = { op: number; value: number };
const values = (items: Item[]) => items.map((i) => num(i.value));

/**
 * The flags of a TCP flags component as mitigations.ts writes it: one item
 * with the match bit (all of these flags set). Any other form is none of
 * ours: undefined.
 */
function tcpFlagsOf(items: Item[]): TcpFlag[] | undefined {
  const [item] = items;
  // GoBGP answers the operator with its end-of-list and length bits set: only the match and not bits say what it means.
  if (items.length !== 1 || (num(item!.op) & (bitmaskOp.match | bitmaskOp.not)) !== bitmaskOp.match) return undefined;
  const value = num(item!.value);
  return tcpFlagNames.filter((_name, bit) => (value & (1 << bit)) !== 0);
}

function flowMatchOf(rules: AnyMessage[]): FlowMatch | undefined {
  const match: Partial<FlowMatch> = {};
  for (const rule of rules) {
    const type = num(rule.type);
    const items = (rule.items as Item[] | undefined) ?? [];
    if (type === 9) {
      const flags = tcpFlagsOf(items);
      if (!flags) return undefined;
      match.tcpFlags = flags;
    } else if (typeOf(rule) === 'FlowSpecIPPrefix') {
      // An IPv6 prefix matched from an offset (RFC 8956) is none of ours: the speaker is given whole prefixes.
      if (num(rule.offset) !== 0) return undefined;
      const prefix = `${String(rule.prefix)}/${num(rule.prefix_len)}`;
      if (type === 1) match.destination = prefix;
      else if (type === 2) match.source = prefix;
    } else if (type === 3) match.protocols = values(items);
    else if (type === 5) match.destinationPorts = values(items);
    else if (type === 6) match.sourcePorts = values(items);
    else if (type === 10 && items.length === 2) match.packetLength = { min: num(items[0]!.value), max: num(items[1]!.value) };
  }
  return match.destination ? (match as FlowMatch) : undefined;
}

function flowspecOf(nlri: AnyMessage, pattrs: AnyMessage[]): Mitigation | undefined {
  const match = flowMatchOf((nlri.rules as AnyMessage[] | undefined) ?? []);
  const extended = (find(pattrs, 'ExtendedCommunitiesAttribute')?.communities as AnyMessage[] | undefined) ?? [];
  const trafficRate = find(extended, 'TrafficRateExtended');
  if (!match || !trafficRate) return undefined;
  const rate = num(trafficRate.rate);
  return rate === 0 ? { action: 'flowspec_discard', match } : { action: 'flowspec_rate_limit', match, bytesPerSecond: rate };
}

export function mitigationOfPath(path: ListedPath): Mitigation | undefined {
  const pattrs = path.pattrs ?? [];
  if (!path.nlri) return undefined;
  if (typeOf(path.nlri) === 'IPAddressPrefix') return blackholeOf(path.nlri, pattrs);
  if (typeOf(path.nlri) === 'FlowSpecNLRI') return flowspecOf(path.nlri, pattrs);
  return undefined;
}
