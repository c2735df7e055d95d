import { seededRandom } from './malformed';

export interface GeneratedFlows {
  batches: string[];
  bytesByDst: Map<string, number>;
  packetsBySrc: Map<string, number>;
  total: number;
  totalBytes: number;
}

/**
 * Deterministic flows as NDJSON batches, with the sums a top-talker query
 * must return: `count` flows over 200 sources and 50 destinations, event
 * times spread over the ten minutes before `now`.
 */
export function generateFlows(count: number, batchSize: number, seed: number, now = Date.now()): GeneratedFlows {
  const rand = seededRandom(seed);
  const bytesByDst = new Map<string, number>();
  const packetsBySrc = new Map<string, number>();
  const batches: string[] = [];
  let lines: string[] = [];
  let totalBytes = 0;
  for (let i = 0; i < count; i += 1) {
    const src = `10.${Math.floor(rand() * 2)}.${Math.floor(rand() * 10)}.${Math.floor(rand() * 10)}`;
    const dst = `172.16.0.${Math.floor(rand() * 50)}`;
    const bytes = 40 + Math.floor(rand() * 1_500_000);
    const packets = 1 + Math.floor(rand() * 1000);
    const timestamp = now - 600_000 + Math.floor(rand() * 590_000);
    bytesByDst.set(dst, (bytesByDst.get(dst) ?? 0) + bytes);
    packetsBySrc.set(src, (packetsBySrc.get(src) ?? 0) + packets);
    totalBytes += bytes;
    lines.push(JSON.stringify({ src_ip: src, dst_ip: dst, bytes, packets, protocol: rand() < 0.7 ? 'tcp' : 'udp', timestamp }));
    if (lines.length === batchSize) {
      batches.push(lines.join('\n'));
      lines = [];
    }
  }
  if (lines.length) batches.push(lines.join('\n'));
  return { batches, bytesByDst, packetsBySrc, total: count, totalBytes };
}

export const sortedEntries = (m: Map<string, number>) => [...m.entries()].sort((a, b) => (a[0] < b[0] ? -1 : 1));
