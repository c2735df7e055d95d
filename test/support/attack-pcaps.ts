import type { PcapFlow } from './pcap';

/**
 * The traffic of attacks and of ordinary use as flows of a pcap (test/support/pcap.ts writes them
 * 1 ms a packet, so N packets span N ms): small enough to replay in a second or two through a real
 * exporter, and shaped so each attack's type follows from core/detection/classify.ts.
 */

/** `count` sources: `${prefix}1`, `${prefix}2`… (an IPv4 prefix ends with '.', an IPv6 one with '::'). */
export const hosts = (prefix: string, count: number): string[] => Array.from({ length: count }, (_, i) => `${prefix}${i + 1}`);

/** A SYN flood: `flows` single-SYN flows from `sources` in turn to `target`:80, each from its own port. */
export function synFlood(sources: string[], target: string, flows = 4_000): PcapFlow[] {
  return Array.from({ length: flows }, (_, i) => ({ src: sources[i % sources.length]!, dst: target, protocol: 'tcp', srcPort: 1024 + i, dstPort: 80, packets: 1, payloadBytes: 0 }));
}

/**
 * A UDP flood: `flows` flows of 10 packets of 512 bytes from `sources` in turn to `target`'s ports
 * 1000, 1001…, from source ports 20000 and up (none an amplification port: 53, 123, 1900, 11211, 389, 19).
 */
export function udpFlood(sources: string[], target: string, flows = 400): PcapFlow[] {
  return Array.from({ length: flows }, (_, i) => ({ src: sources[i % sources.length]!, dst: target, protocol: 'udp', srcPort: 20_000 + i, dstPort: 1000 + i, packets: 10, payloadBytes: 512 }));
}

/** An NTP amplification: reflectors answering from port 123 (monlist-sized, 468 bytes) to `target`'s ports 40000 and up. */
export function ntpAmplification(reflectors: string[], target: string, flows = 400): PcapFlow[] {
  return Array.from({ length: flows }, (_, i) => ({ src: reflectors[i % reflectors.length]!, dst: target, protocol: 'udp', srcPort: 123, dstPort: 40_000 + i, packets: 10, payloadBytes: 468 }));
}

/** A carpet attack: UDP floods spread over `addresses` hosts of `net` (`${net}1`… e.g. '10.30.0.'), the same packets to each. */
export function carpet(sources: string[], net: string, addresses: number, flows = 400): PcapFlow[] {
  const targets = hosts(net, addresses);
  return Array.from({ length: flows }, (_, i) => ({ src: sources[i % sources.length]!, dst: targets[i % addresses]!, protocol: 'udp', srcPort: 20_000 + i, dstPort: 1000 + i, packets: 10, payloadBytes: 512 }));
}

/**
 * Ordinary traffic from `clients` to `servers`, in turns: a web session (12 TCP packets, SYN to
 * FIN), a DNS exchange (a query to 53 and its answer from 53), and a ping (3 ICMP echo requests):
 * 17 packets a turn, 680 in all by default (spread over 0.7 s, or over as long as what they are
 * interleaved with).
 */
export function background(clients: string[], servers: string[], turns = 40): PcapFlow[] {
  return Array.from({ length: turns }, (_, i): PcapFlow[] => {
    const client = clients[i % clients.length]!;
    const server = servers[i % servers.length]!;
    return [
      { src: client, dst: server, protocol: 'tcp', srcPort: 50_000 + i, dstPort: 443, packets: 12, payloadBytes: 900 },
      { src: client, dst: server, protocol: 'udp', srcPort: 53_000 + i, dstPort: 53, packets: 1, payloadBytes: 40 },
      { src: server, dst: client, protocol: 'udp', srcPort: 53, dstPort: 53_000 + i, packets: 1, payloadBytes: 120 },
      { src: client, dst: server, protocol: 'icmp', packets: 3, payloadBytes: 56 },
    ];
  }).flat();
}

/** The flows of `a` and `b` taken in turns (the rest of the longer one at the end), so both span the same time. */
export function interleave(a: PcapFlow[], b: PcapFlow[]): PcapFlow[] {
  const out: PcapFlow[] = [];
  const ratio = Math.max(1, Math.round(a.length / Math.max(1, b.length)));
  let j = 0;
  a.forEach((flow, i) => {
    out.push(flow);
    if ((i + 1) % ratio === 0 && j < b.length) out.push(b[j++]!);
  });
  return out.concat(b.slice(j));
}
