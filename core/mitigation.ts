/**
 * What a BGP speaker announces for a mitigation: plain data, written by the
 * automation run's activities into the mitigation ledger and turned into
 * GoBGP paths by workers/mitigation/mitigations.ts. In core so the automation
 * workflow's contract can name it.
 */

/** RFC 8955 match: the destination prefix is required; the rest narrows it. IPv4 only in this release. */
export interface FlowMatch {
  /** CIDR, `192.0.2.0/24`. */
  destination: string;
  source?: string;
  protocols?: number[];
  destinationPorts?: number[];
  sourcePorts?: number[];
  packetLength?: { min: number; max: number };
}

export type Mitigation =
  /** RTBH: the host route of `destination` (a /32 or a /128) with BLACKHOLE (65535:666) and the operator's communities. */
  | { action: 'blackhole'; destination: string; nextHop: string; communities?: string[] }
  | { action: 'flowspec_discard'; match: FlowMatch }
  | { action: 'flowspec_rate_limit'; match: FlowMatch; bytesPerSecond: number };
