import { tcpFlagNames, type FlowMatch, type TcpFlag } from '../mitigation';
import { transportOf, type RateFlow } from './traffic-class';

/**
 * The fingerprint: the narrowest Flowspec match (core/mitigation.ts FlowMatch,
 * the shape the BGP speaker announces) that still covers at least
 * `attackShare` (90 %) of the attack's packets, and that covers at most
 * `baselineShare` (10 %) of the destination's normal traffic (a sample of its
 * flows before the attack). Shares are of packets (scaled by sampling).
 *
 * Greedy and deterministic: starting from the destination alone, each round
 * proposes, for every dimension not yet used, the fewest values (most packets
 * first, ties by the smaller value) that keep the attack covered, and takes
 * the one that leaves the least baseline traffic matched (ties: the most
 * attack traffic kept, then the order protocol, destination ports, source
 * ports, TCP flags, packet length). It stops when no dimension can be added.
 *
 * | dimension | proposed when | values |
 * |---|---|---|
 * | protocols | always | IANA numbers of the flows' protocols |
 * | destination / source ports | protocols chosen, all TCP or UDP | at most `maxPorts` (8) ports; port 0 (fragments, which carry no port) is never matched |
 * | TCP flags | protocols chosen, TCP alone | flags set in enough of the flows (the rule matches packets with all of them set) |
 * | packet length | always | the narrowest range of the flows' mean packet sizes (bytes / packets) that covers enough packets |
 */
export interface FingerprintSettings {
  attackShare: number;
  baselineShare: number;
  maxPorts: number;
}

export const defaultFingerprintSettings: FingerprintSettings = { attackShare: 0.9, baselineShare: 0.1, maxPorts: 8 };

export interface Fingerprint {
  match: FlowMatch;
  /** Share of the attack's packets the match covers. */
  attack_share: number;
  /** Share of the baseline's packets the match covers (0 for an empty baseline). */
  baseline_share: number;
  /** Whether both bounds hold; a preview shows a rule that does not, but it should not be announced. */
  within_bounds: boolean;
}

type Predicate = (f: RateFlow) => boolean;
type Piece = Partial<Omit<FlowMatch, 'destination' | 'source'>>;
interface Proposal {
  dimension: Dimension;
  piece: Piece;
  test: Predicate;
}

const dimensions = ['protocols', 'destinationPorts', 'sourcePorts', 'tcpFlags', 'packetLength'] as const;
type Dimension = (typeof dimensions)[number];

const protocolNumbers: Record<string, number> = { icmp: 1, igmp: 2, tcp: 6, udp: 17, gre: 47, esp: 50, ah: 51, 'ipv6-icmp': 58, icmpv6: 58, sctp: 132 };

/** A flow's IANA protocol number, or undefined when its protocol is neither a known name nor a number. */
export function protocolNumber(protocol: string): number | undefined {
  if (/^\d{1,3}$/.test(protocol) && Number(protocol) <= 255) return Number(protocol);
  return protocolNumbers[protocol];
}

const packetsOf = (flows: readonly RateFlow[], test: Predicate = () => true) => flows.reduce((n, f) => (test(f) ? n + f.packets : n), 0);
const meanSize = (f: RateFlow) => (f.packets > 0 ? Math.floor(f.bytes / f.packets) : -1);

/** The fewest values, most packets first (ties: smaller value), whose flows hold at least `needed` packets. */
function fewestValues(flows: readonly RateFlow[], valueOf: (f: RateFlow) => number | undefined, needed: number): number[] | undefined {
  const byValue = new Map<number, number>();
  for (const f of flows) {
    const v = valueOf(f);
    if (v !== undefined) byValue.set(v, (byValue.get(v) ?? 0) + f.packets);
  }
  const ranked = [...byValue].sort(([va, a], [vb, b]) => b - a || va - vb);
  const chosen: number[] = [];
  let covered = 0;
  for (const [v, packets] of ranked) {
    if (covered >= needed) break;
    chosen.push(v);
    covered += packets;
  }
  return covered >= needed && chosen.length > 0 ? chosen.sort((a, b) => a - b) : undefined;
}

/** The narrowest [min, max] of mean packet sizes whose flows hold at least `needed` packets (ties: the lower range). */
function narrowestRange(flows: readonly RateFlow[], needed: number): { min: number; max: number } | undefined {
  const bySize = new Map<number, number>();
  for (const f of flows) if (f.packets > 0) bySize.set(meanSize(f), (bySize.get(meanSize(f)) ?? 0) + f.packets);
  const sizes = [...bySize].sort(([a], [b]) => a - b);
  let best: { min: number; max: number } | undefined;
  let covered = 0;
  for (let lo = 0, hi = 0; hi < sizes.length; hi++) {
    covered += sizes[hi]![1];
    while (lo < hi && covered - sizes[lo]![1] >= needed) covered -= sizes[lo++]![1];
    if (covered >= needed && (!best || sizes[hi]![0] - sizes[lo]![0] < best.max - best.min)) best = { min: sizes[lo]![0], max: sizes[hi]![0] };
  }
  return best;
}

/** TCP flags in bit order, each kept when the flows with all the kept ones set still hold `needed` packets. */
function commonFlags(flows: readonly RateFlow[], needed: number): TcpFlag[] | undefined {
  let mask = 0;
  for (let bit = 0; bit < tcpFlagNames.length; bit++) {
    const next = mask | (1 << bit);
    if (packetsOf(flows, (f) => f.tcp_flags !== undefined && (f.tcp_flags & next) === next) >= needed) mask = next;
  }
  return mask === 0 ? undefined : tcpFlagNames.filter((_, bit) => (mask & (1 << bit)) !== 0);
}

function propose(dimension: Dimension, matched: readonly RateFlow[], chosen: Piece, needed: number, s: FingerprintSettings): Proposal | undefined {
  const portsAllowed = chosen.protocols?.every((p) => p === 6 || p === 17) ?? false;
  switch (dimension) {
    case 'protocols': {
      const values = fewestValues(matched, (f) => protocolNumber(f.protocol), needed);
      return values && { dimension, piece: { protocols: values }, test: (f) => values.includes(protocolNumber(f.protocol) ?? -1) };
    }
    case 'destinationPorts':
    case 'sourcePorts': {
      if (!portsAllowed) return undefined;
      const portOf = (f: RateFlow) => (dimension === 'destinationPorts' ? f.dst_port : f.src_port);
      const values = fewestValues(matched, (f) => (portOf(f) === 0 ? undefined : portOf(f)), needed);
      if (!values || values.length > s.maxPorts) return undefined;
      return { dimension, piece: { [dimension]: values }, test: (f) => values.includes(portOf(f)) };
    }
    case 'tcpFlags': {
      if (chosen.protocols?.length !== 1 || chosen.protocols[0] !== 6) return undefined;
      const flags = commonFlags(matched, needed);
      if (!flags) return undefined;
      const mask = flags.reduce((m, name) => m | (1 << tcpFlagNames.indexOf(name)), 0);
      return { dimension, piece: { tcpFlags: flags }, test: (f) => f.tcp_flags !== undefined && (f.tcp_flags & mask) === mask };
    }
    case 'packetLength': {
      const range = narrowestRange(matched, needed);
      return range && { dimension, piece: { packetLength: range }, test: (f) => meanSize(f) >= range.min && meanSize(f) <= range.max };
    }
  }
}

/** The fingerprint of an attack on `destination` (CIDR, a host's /32 or /128 or a carpet prefix), judged against the baseline sample. */
export function fingerprint(destination: string, attack: readonly RateFlow[], baseline: readonly RateFlow[], s = defaultFingerprintSettings): Fingerprint {
  const attackPackets = packetsOf(attack);
  const needed = attackPackets * s.attackShare;
  const tests: Predicate[] = [];
  const all = (f: RateFlow) => tests.every((t) => t(f));
  let piece: Piece = {};
  let matched = [...attack];
  for (let left = dimensions.filter((d) => d !== 'tcpFlags' || attack.some((f) => transportOf(f.protocol) === 'tcp')); ; ) {
    const proposals = left.map((d) => propose(d, matched, piece, needed, s)).filter((p): p is Proposal => p !== undefined);
    if (proposals.length === 0) break;
    const scored = proposals.map((p) => ({ p, baseline: packetsOf(baseline, (f) => all(f) && p.test(f)), kept: packetsOf(matched, p.test) }));
    scored.sort((a, b) => a.baseline - b.baseline || b.kept - a.kept || dimensions.indexOf(a.p.dimension) - dimensions.indexOf(b.p.dimension));
    const best = scored[0]!.p;
    tests.push(best.test);
    piece = { ...piece, ...best.piece };
    matched = matched.filter(best.test);
    left = left.filter((d) => d !== best.dimension);
  }
  const baselinePackets = packetsOf(baseline);
  const attackShare = attackPackets > 0 ? packetsOf(matched) / attackPackets : 0;
  const baselineShare = baselinePackets > 0 ? packetsOf(baseline, all) / baselinePackets : 0;
  const match: FlowMatch = { destination, ...orderedPiece(piece) };
  return { match, attack_share: attackShare, baseline_share: baselineShare, within_bounds: attackShare >= s.attackShare && baselineShare <= s.baselineShare };
}

/** The match's fields in FlowMatch's own order, whatever order the rounds chose them in. */
function orderedPiece(p: Piece): Piece {
  return {
    ...(p.protocols ? { protocols: p.protocols } : {}),
    ...(p.destinationPorts ? { destinationPorts: p.destinationPorts } : {}),
    ...(p.sourcePorts ? { sourcePorts: p.sourcePorts } : {}),
    ...(p.tcpFlags ? { tcpFlags: p.tcpFlags } : {}),
    ...(p.packetLength ? { packetLength: p.packetLength } : {}),
  };
}
