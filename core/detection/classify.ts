import { amplificationPorts, type AmplificationVector, type Rates } from './traffic-class';

/**
 * The attack's type from its window's shape: the shares of its packets a
 * second, tried in this order, the first that holds wins.
 *
 * | type | when |
 * |---|---|
 * | syn_flood | TCP SYN (without ACK) packets are more than 90 % of all |
 * | icmp_flood | ICMP packets are more than half |
 * | ip_fragmentation | fragments (core/detection/traffic-class.ts isFragmentFlow) are more than half |
 * | dns_amplification … chargen_amplification | UDP from that source port (53, 123, 1900, 11211, 389, 19, tried in that order) is more than half |
 * | udp_flood | UDP packets are more than half |
 * | carpet | the crossing is a prefix's (traffic spread over its addresses): whatever the shape, which is kept as the decision's `vector` |
 * | unknown | none of the above (or no packets) |
 */
export const attackTypes = [
  'syn_flood',
  'icmp_flood',
  'ip_fragmentation',
  ...(Object.keys(amplificationPorts) as AmplificationVector[]).map((v) => `${v}_amplification` as const),
  'udp_flood',
  'carpet',
  'unknown',
] as const;
export type AttackType = (typeof attackTypes)[number];

/** The shares each type needs (of packets a second); a share must be exceeded, not merely reached. */
export const attackShares = { syn: 0.9, dominant: 0.5 } as const;

/** The type the shape alone names (never `carpet`). */
export function shapeOf(rates: Rates): AttackType {
  const total = rates.total.pps;
  if (!(total > 0)) return 'unknown';
  const share = (pps: number) => pps / total;
  if (share(rates.tcp_syn.pps) > attackShares.syn) return 'syn_flood';
  if (share(rates.icmp.pps) > attackShares.dominant) return 'icmp_flood';
  if (share(rates.fragments.pps) > attackShares.dominant) return 'ip_fragmentation';
  for (const vector of Object.keys(amplificationPorts) as AmplificationVector[]) {
    if (share(rates[vector].pps) > attackShares.dominant) return `${vector}_amplification`;
  }
  if (share(rates.udp.pps) > attackShares.dominant) return 'udp_flood';
  return 'unknown';
}

/** The attack's type and the shape's: a prefix-wide crossing is `carpet` with its shape as the vector. */
export function classify(rates: Rates, scope: 'host' | 'prefix'): { type: AttackType; vector: AttackType } {
  const vector = shapeOf(rates);
  return { type: scope === 'prefix' ? 'carpet' : vector, vector };
}
