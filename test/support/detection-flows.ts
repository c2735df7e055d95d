import type { RateFlow } from '../../core/detection/traffic-class';

/** The start of a second of event time the detection tests build flows in. */
export const t0 = 1_800_000_000_000;

/** A flow to 203.0.113.9 at t0 with the fields a test does not set. */
export const flow = (over: Partial<RateFlow> = {}): RateFlow => ({
  ts: t0,
  src_ip: '198.51.100.1',
  dst_ip: '203.0.113.9',
  src_port: 40000,
  dst_port: 443,
  protocol: 'tcp',
  bytes: 1500,
  packets: 1,
  ...over,
});

/** SYN-only TCP flags (0x02). */
export const syn = 0x02;
/** SYN and ACK (0x12). */
export const synAck = 0x12;

/** A seeded pseudo-random generator (mulberry32): the same seed, the same numbers, so a property test's failure can be rerun. */
export function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** The items shuffled by the generator (Fisher-Yates). */
export function shuffled<T>(items: readonly T[], random: () => number): T[] {
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

/** The items cut into batches of random sizes (1 to `max`). */
export function batched<T>(items: readonly T[], random: () => number, max = 50): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; ) {
    const size = 1 + Math.floor(random() * max);
    out.push(items.slice(i, i + size));
    i += size;
  }
  return out;
}

/** Ten attackers, 198.51.100.1 sending least and 198.51.100.10 most, so the top sources have one order. */
export const attackers = Array.from({ length: 10 }, (_, i) => `198.51.100.${i + 1}`);

/** A SYN flood to `target` as posted to `POST /flow`: 100 flows a second of 40-49 packets each (about 4,500 packets a second) for `seconds`, from `start`. */
export function synFlood(target: string, start: number, seconds: number) {
  return Array.from({ length: seconds * 100 }, (_, i) => ({
    timestamp: start + i * 10,
    src_ip: attackers[i % 10],
    dst_ip: target,
    src_port: 1024 + (i % 50_000),
    dst_port: 80,
    protocol: 'tcp',
    tcp_flags: syn,
    packets: 40 + (i % 10),
    bytes: (40 + (i % 10)) * 60,
  }));
}
