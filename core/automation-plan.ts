import { isIP } from 'node:net';
import { parseAddressRange } from './flow-query';
import { tcpFlagNames, type FlowMatch, type Mitigation } from './mitigation';
import { protocolName } from './flow-message';

/**
 * What a playbook's actions become for one incident: pure, plain data in and
 * out. A network action acts on the incident's destination (its service, when
 * that is an address): a blackhole on its host route, a flowspec rule on it
 * with the action's filter. Written in the form the BGP speaker reads back
 * (workers/mitigation/announced-paths.ts), so the reconciler's comparison of
 * the ledger with the speaker is stable.
 */

/** A playbook action as a run reads it: structurally, any of core/playbooks.ts's actions. */
export interface ActionSpec {
  type: 'blackhole' | 'flowspec_discard' | 'flowspec_rate_limit' | 'flowspec_fingerprint' | 'webhook';
  duration_minutes?: number;
  communities?: string[];
  next_hop?: string | null;
  protocols?: number[];
  source_ports?: number[];
  destination_ports?: number[];
  tcp_flags?: string[];
  packet_length?: { min: number; max: number } | null;
  rate_bytes_per_second?: number;
  attack_share?: number;
  baseline_share?: number;
  until_attack_ends?: boolean;
}

/** An action as a run carries it out: any but the fingerprint's, which planning turns into a Flowspec discard. */
export type PlannableSpec = ActionSpec & { type: Exclude<ActionSpec['type'], 'flowspec_fingerprint'> };
export const isPlannable = (spec: ActionSpec): spec is PlannableSpec => spec.type !== 'flowspec_fingerprint';

/** A fingerprint action's rule as it is planned: the Flowspec discard of the fingerprint's match. */
export function fingerprintRuleOf(action: ActionSpec, match: FlowMatch): PlannableSpec {
  return {
    type: 'flowspec_discard',
    duration_minutes: action.duration_minutes,
    ...(action.until_attack_ends ? { until_attack_ends: true } : {}),
    protocols: match.protocols ?? [],
    source_ports: match.sourcePorts ?? [],
    destination_ports: match.destinationPorts ?? [],
    tcp_flags: match.tcpFlags ?? [],
    packet_length: match.packetLength ?? null,
  };
}

/** The host route of an address: `192.0.2.7/32`, `2001:db8::7/128` (compressed, lower case). */
export function hostRoute(address: string): string | undefined {
  const version = isIP(address);
  if (version === 0) return undefined;
  return version === 4 ? `${address}/32` : `${new URL(`http://[${address}]/`).hostname.slice(1, -1)}/128`;
}

/** A list as the speaker reads it back: absent when empty, sorted. */
const list = (values: number[] | undefined) => (values && values.length ? { values: [...values].sort((a, b) => a - b) } : undefined);

/** TCP flags as the speaker reads them back: in bit order, each once. */
const flagsInBitOrder = (flags: string[] | undefined) => tcpFlagNames.filter((name) => flags?.includes(name));

/** The flowspec match of an action on `destination` (a host route, IPv4 or IPv6). */
export function flowMatchOf(action: ActionSpec, destination: string): FlowMatch {
  const protocols = list(action.protocols);
  const destinationPorts = list(action.destination_ports);
  const sourcePorts = list(action.source_ports);
  const tcpFlags = flagsInBitOrder(action.tcp_flags);
  return {
    destination,
    ...(protocols ? { protocols: protocols.values } : {}),
    ...(destinationPorts ? { destinationPorts: destinationPorts.values } : {}),
    ...(sourcePorts ? { sourcePorts: sourcePorts.values } : {}),
    ...(tcpFlags.length ? { tcpFlags } : {}),
    ...(action.packet_length ? { packetLength: { min: action.packet_length.min, max: action.packet_length.max } } : {}),
  };
}

/**
 * The mitigation an action announces for a destination address; undefined
 * for the webhook action. `defaultNextHop`: a blackhole's next hop when the
 * action names none (the operator's discard address, BGP_BLACKHOLE_NEXT_HOP).
 */
export function mitigationOf(action: ActionSpec, address: string, defaultNextHop: { ipv4: string; ipv6: string }): Mitigation | undefined {
  const destination = hostRoute(address);
  if (!destination) return undefined;
  switch (action.type) {
    case 'blackhole': {
      const communities = [...new Set(action.communities ?? [])].filter((c) => c !== '65535:666').sort();
      const nextHop = action.next_hop ?? (isIP(address) === 4 ? defaultNextHop.ipv4 : defaultNextHop.ipv6);
      return { action: 'blackhole', destination, nextHop, ...(communities.length ? { communities } : {}) };
    }
    case 'flowspec_discard':
      return { action: 'flowspec_discard', match: flowMatchOf(action, destination) };
    case 'flowspec_rate_limit':
      // The speaker carries the rate as a 32-bit float: the ledger holds the value it will read back.
      return { action: 'flowspec_rate_limit', match: flowMatchOf(action, destination), bytesPerSecond: Math.fround(action.rate_bytes_per_second ?? 0) };
    default:
      return undefined;
  }
}

/** What a preview counts as matched: the destination's flows narrowed by the action's filter (a blackhole: none). */
export interface PreviewFilter {
  /** The destination as an inclusive range of 16-byte addresses (core/flow-query.ts). */
  first: string;
  last: string;
  /** Protocol labels as flows store them (`tcp`, `udp`, `47`). */
  protocols: string[];
  sourcePorts: number[];
  destinationPorts: number[];
  /** TCP flag bits every matched flow has set (its packets' flags ORed, as exporters report them); 0: any. */
  tcpFlagBits: number;
  /** The range a matched flow's mean packet size (bytes ÷ packets) lies in; null: any. */
  packetLength: { min: number; max: number } | null;
}

/** The bit of each TCP flag in the flags byte (RFC 9293), in tcpFlagNames' order. */
export const tcpFlagBitsOf = (flags: readonly string[]): number => tcpFlagNames.reduce((bits, name, i) => (flags.includes(name) ? bits | (1 << i) : bits), 0);

/**
 * What a planned mitigation's preview counts as matched: the rule the run
 * announces, read from the mitigation itself (a blackhole: its whole
 * destination; a Flowspec rule: its match), so a preview describes that rule
 * and no other. Undefined for a match with a source (no
 * playbook action plans one, and a preview cannot narrow on it).
 */
export function previewFilterOfMitigation(mitigation: Mitigation): PreviewFilter | undefined {
  if (mitigation.action === 'blackhole') {
    const range = parseAddressRange(mitigation.destination);
    return range && { ...range, protocols: [], sourcePorts: [], destinationPorts: [], tcpFlagBits: 0, packetLength: null };
  }
  const { match } = mitigation;
  const range = parseAddressRange(match.destination);
  if (!range || match.source !== undefined) return undefined;
  const tcpFlags = match.tcpFlags ?? [];
  // A rule with TCP flags matches TCP packets only, whatever other protocols it names (the playbooks allow tcp among them).
  const protocols = tcpFlags.length > 0 ? [6] : (match.protocols ?? []);
  return {
    ...range,
    protocols: protocols.map(protocolName),
    sourcePorts: match.sourcePorts ?? [],
    destinationPorts: match.destinationPorts ?? [],
    tcpFlagBits: tcpFlagBitsOf(tcpFlags),
    packetLength: match.packetLength ? { min: match.packetLength.min, max: match.packetLength.max } : null,
  };
}

/** Whether a filter judges what a flow holds only in sum over its packets (flags ORed, bytes and packets totalled). */
export const judgesPackets = (filter: PreviewFilter): boolean => filter.tcpFlagBits !== 0 || filter.packetLength !== null;

/** An automation run's states (workflows/automation.ts). */
export const automationStatuses = ['evaluating', 'awaiting_approval', 'denied', 'expired', 'active', 'withdrawn', 'completed', 'failed'] as const;
export type AutomationStatus = (typeof automationStatuses)[number];

/** What an action would have matched in the stored flows of the last minutes, towards the incident's destination. */
export interface ActionPreview {
  window_minutes: number;
  /** Every flow towards the destination, in bits and packets per second over the window. */
  destination_bits_per_second: number;
  /** The flows the action matches (a blackhole: all of them). */
  matched_bits_per_second: number;
  matched_packets_per_second: number;
  /** matched ÷ destination bits, 0 to 1 (0 when the destination had no traffic). */
  share: number;
  /** The heaviest matched sources, at most ten. */
  top_sources: Array<{ src_ip: string; bits_per_second: number; share: number }>;
  /**
   * True when the action filters on TCP flags or packet length and some matched flow held more
   * than one packet: a flow's flags are its packets' ORed and its size their mean, so such a flow
   * may hold packets the rule would not match. False when every matched flow was one packet.
   */
  approximate: boolean;
}

/** One action of the playbook, as the run carries it out. */
export interface PlannedAction {
  /** The mitigation ledger's record id (`<automationId>-<index>`); the webhook action has one too, for the audit. */
  id: string;
  type: 'blackhole' | 'flowspec_discard' | 'flowspec_rate_limit' | 'webhook';
  /** The prefix acted on (CIDR); null for the webhook action. */
  destination: string | null;
  duration_minutes: number;
  /** What the speaker announces, in the form it reads back; null for the webhook action. */
  mitigation: Mitigation | null;
  preview: ActionPreview | null;
  /** Withdrawn when the incident resolves (its attack ended), at `ends_at` at the latest. */
  until_attack_ends?: true;
  /** For a fingerprint action: what its rule covers of the attack's packets and of the destination's normal traffic. */
  fingerprint?: { attack_share: number; baseline_share: number };
  /** Epoch ms, set once announced: from `starts_at` until `ends_at`, unless withdrawn at `withdrawn_at`. */
  starts_at?: number;
  ends_at?: number;
  withdrawn_at?: number;
}

/** A fingerprint action's shares and the rule it became, as clients read a playbook's Flowspec filter. */
export function fingerprintView(action: Pick<PlannedAction, 'fingerprint' | 'mitigation'>) {
  const match = action.mitigation && 'match' in action.mitigation ? action.mitigation.match : undefined;
  return {
    attack_share: action.fingerprint?.attack_share ?? 0,
    baseline_share: action.fingerprint?.baseline_share ?? 0,
    rule: {
      protocols: match?.protocols ?? [],
      source_ports: match?.sourcePorts ?? [],
      destination_ports: match?.destinationPorts ?? [],
      tcp_flags: match?.tcpFlags ?? [],
      packet_length: match?.packetLength ?? null,
    },
  };
}
