import type { DigestedFlow } from '../flow';

/**
 * What the rate detectors read of a flow: a stored flow row's fields. Bytes
 * and packets are the row's, already scaled by the flow's sampling rate when
 * it was accepted (core/flow.ts scaledBySampling, the one place sampling is
 * applied), so a flow sampled 1 in 100 counts 100 times its packets and
 * bytes here too. A flow record counts as one flow whatever its sampling:
 * flows/s is records seen a second.
 */
export type RateFlow = DigestedFlow;

/** UDP source ports of the reflection/amplification attacks, by the attack's name. */
export const amplificationPorts = { dns: 53, ntp: 123, ssdp: 1900, memcached: 11211, cldap: 389, chargen: 19 } as const;
export type AmplificationVector = keyof typeof amplificationPorts;
const amplificationByPort = new Map<number, AmplificationVector>(
  Object.entries(amplificationPorts).map(([name, port]) => [port, name as AmplificationVector]),
);

/** The classes every window counts, in this order (the order of the counters). */
export const trafficClasses = ['total', 'tcp', 'tcp_syn', 'udp', 'icmp', 'fragments', ...(Object.keys(amplificationPorts) as AmplificationVector[])] as const;
export type TrafficClass = (typeof trafficClasses)[number];
export const classIndex = Object.fromEntries(trafficClasses.map((c, i) => [c, i])) as Record<TrafficClass, number>;

/** Counters per class: packets, bytes, flows. */
export const countersPerClass = 3;
export const counterSlots = trafficClasses.length * countersPerClass;

/** The TCP header's SYN and ACK bits (RFC 9293), as flows carry them in tcp_flags (the OR of the flow's packets' flags). */
const synBit = 0x02;
const ackBit = 0x10;

export type Transport = 'tcp' | 'udp' | 'icmp' | 'other';

/** A flow's protocol by name or IANA number (flows name them as core/flow-message.ts does: `tcp`, `udp`, `icmp`, `ipv6-icmp`, or the number). */
export function transportOf(protocol: string): Transport {
  switch (protocol) {
    case 'tcp':
    case '6':
      return 'tcp';
    case 'udp':
    case '17':
      return 'udp';
    case 'icmp':
    case '1':
    case 'ipv6-icmp':
    case 'icmpv6':
    case '58':
      return 'icmp';
    default:
      return 'other';
  }
}

/**
 * Whether a flow is of IP fragments. Flows carry no fragment flag, so the
 * rule is what exporters report of non-first fragments, which carry no
 * transport header: a TCP or UDP flow with source and destination port both
 * 0. (Port 0 is reserved, so real traffic between two ports 0 is itself
 * anomalous.) A first fragment, which carries the header, counts as its
 * protocol only.
 */
export const isFragmentFlow = (f: Pick<RateFlow, 'protocol' | 'src_port' | 'dst_port'>, transport = transportOf(f.protocol)): boolean =>
  (transport === 'tcp' || transport === 'udp') && f.src_port === 0 && f.dst_port === 0;

/** Whether a TCP flow's packets were SYN without ACK: its flags have SYN set and ACK clear. */
export const isSynOnly = (flags: number | undefined): boolean => flags !== undefined && (flags & synBit) !== 0 && (flags & ackBit) === 0;

/**
 * The classes a flow counts in, as bits of their indexes (bit 0: `total`,
 * always set): what the hot paths read, allocating nothing per flow.
 */
export function classBits(f: RateFlow): number {
  const transport = transportOf(f.protocol);
  let bits = 1 << classIndex.total;
  if (transport === 'tcp') {
    bits |= 1 << classIndex.tcp;
    if (isSynOnly(f.tcp_flags)) bits |= 1 << classIndex.tcp_syn;
  } else if (transport === 'udp') {
    bits |= 1 << classIndex.udp;
    const vector = amplificationByPort.get(f.src_port);
    if (vector) bits |= 1 << classIndex[vector];
  } else if (transport === 'icmp') bits |= 1 << classIndex.icmp;
  if (isFragmentFlow(f, transport)) bits |= 1 << classIndex.fragments;
  return bits;
}

/** The classes a flow counts in: always `total`, then its transport, SYN, fragments and amplification port as they apply. */
export function classesOf(f: RateFlow): TrafficClass[] {
  const bits = classBits(f);
  return trafficClasses.filter((_, i) => (bits & (1 << i)) !== 0);
}

/** Adds a flow to counters (a Float64Array of counterSlots). */
export function addFlow(counters: Float64Array, f: RateFlow): void {
  let bits = classBits(f);
  for (let at = 0; bits !== 0; bits >>>= 1, at += countersPerClass) {
    if ((bits & 1) === 0) continue;
    counters[at] = counters[at]! + f.packets;
    counters[at + 1] = counters[at + 1]! + f.bytes;
    counters[at + 2] = counters[at + 2]! + 1;
  }
}

/** Rates of one class over a window: packets, bits and flows a second. */
export interface ClassRates {
  pps: number;
  bps: number;
  fps: number;
}

export type Rates = Record<TrafficClass, ClassRates>;

/** Counters summed over a window of `seconds` as rates a second. */
export function ratesOf(counters: Float64Array, seconds: number): Rates {
  const out = {} as Rates;
  for (const c of trafficClasses) {
    const at = classIndex[c] * countersPerClass;
    out[c] = { pps: counters[at]! / seconds, bps: (counters[at + 1]! * 8) / seconds, fps: counters[at + 2]! / seconds };
  }
  return out;
}
