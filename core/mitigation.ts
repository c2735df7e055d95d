/**
 * What a BGP speaker announces for a mitigation: plain data, written by the
 * automation run's activities into the mitigation ledger and turned into
 * GoBGP paths by workers/mitigation/mitigations.ts. In core so the automation
 * workflow's contract can name it.
 */

/** The TCP header's flags by name, in bit order: the flag at index i is bit 2^i of RFC 8955's TCP flags component (fin 0x01 … cwr 0x80). */
export const tcpFlagNames = ['fin', 'syn', 'rst', 'psh', 'ack', 'urg', 'ece', 'cwr'] as const;
export type TcpFlag = (typeof tcpFlagNames)[number];

/**
 * RFC 8955 match (RFC 8956 for IPv6): the destination prefix is required;
 * the rest narrows it. An IPv6 destination announces in IPv6 Flowspec, where
 * `protocols` match the upper-layer protocol (the last next header).
 */
export interface FlowMatch {
  /** CIDR, `192.0.2.0/24` or `2001:db8::/64`; `source`, when given, of the same IP version. */
  destination: string;
  source?: string;
  protocols?: number[];
  destinationPorts?: number[];
  sourcePorts?: number[];
  /**
   * TCP flags (`fin syn rst psh ack urg ece cwr`): the rule matches packets
   * with every one of them set, whatever the others (the bitmask operator's
   * match bit), listed in bit order as the speaker reads them back.
   */
  tcpFlags?: TcpFlag[];
  packetLength?: { min: number; max: number };
}

export type Mitigation =
  /** RTBH: the host route of `destination` (a /32 or a /128) with BLACKHOLE (65535:666) and the operator's communities. */
  | { action: 'blackhole'; destination: string; nextHop: string; communities?: string[] }
  | { action: 'flowspec_discard'; match: FlowMatch }
  | { action: 'flowspec_rate_limit'; match: FlowMatch; bytesPerSecond: number };

/** The prefix a mitigation acts on: a blackhole's host route, a Flowspec rule's destination. */
export const mitigationDestination = (m: Mitigation): string => (m.action === 'blackhole' ? m.destination : m.match.destination);
