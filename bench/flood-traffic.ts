import { call } from './client';
import { pacedLoop } from './paced';

/**
 * The flood scenario's traffic into its own workspace, one NDJSON body posted
 * every 100 ms on schedule (not paced by the answers, each of which is timed
 * and counted):
 *
 * - ordinary flows, 200 a second to 32 addresses of 198.19.0.0/24, each far
 *   below every bound, for as long as the traffic runs: a network's flows go
 *   on between attacks, and they move the workspace's event time on;
 * - the floods, each on its own destination (`floodDestination`), started
 *   `spacingMs` apart and each lasting `durationMs`: 100 UDP flows a second
 *   to port 27015 from 20 sources and changing source ports, 250 packets of
 *   512 bytes each (25,000 packets and 102 Mbit/s a second).
 *
 * A tick's flows are stamped over the 100 ms before it: event time is the
 * time the flows happened, reported within 100 ms (an exporter with a short
 * export interval; a real exporter's reports come later, never earlier).
 */
export interface FloodSizes {
  floods: number;
  spacingMs: number;
  durationMs: number;
}

export const floodSizes: { full: FloodSizes; quick: FloodSizes } = {
  full: { floods: 200, spacingMs: 1_000, durationMs: 10_000 },
  quick: { floods: 10, spacingMs: 1_000, durationMs: 10_000 },
};

const tickMs = 100;
/** Ordinary traffic alone before the first flood: the workspace's event time is already going on when it starts. */
const leadMs = 6_000;
const ordinaryFlowsPerTick = 20;
const floodFlowsPerTick = 10;
export const floodShape = { port: 27015, packetsPerFlow: 250, packetBytes: 512, sources: 20 };

/** Flood `n`'s destination: one address in a /24 of its own within 198.18.0.0/16, so no two floods make a carpet. */
export const floodDestination = (n: number) => `198.18.${n}.10`;

/** What became of one flood's flows. */
export interface FloodRecord {
  destination: string;
  /** Wall time its first flows were posted, and the event time of its first flow. */
  startedAt?: number;
  firstFlowTs?: number;
  /** When the bench read the earliest `201` of a post holding its flows: the first of its flows durably stored (JetStream). */
  storedAt?: number;
  posts: number;
  refusedPosts: number;
}

const spaced = (j: number, count: number, now: number) => now - tickMs + Math.floor((j * tickMs) / count);

function ordinaryFlows(tick: number, now: number): object[] {
  return Array.from({ length: ordinaryFlowsPerTick }, (_, j) => ({
    timestamp: spaced(j, ordinaryFlowsPerTick, now),
    src_ip: `100.64.${tick % 200}.${j + 1}`,
    dst_ip: `198.19.0.${((tick * ordinaryFlowsPerTick + j) % 32) + 1}`,
    src_port: 443,
    dst_port: 30_000 + ((tick * ordinaryFlowsPerTick + j) % 20_000),
    protocol: 'tcp',
    tcp_flags: 0x18,
    packets: 5,
    bytes: 5 * 800,
  }));
}

function floodFlows(n: number, tick: number, now: number): object[] {
  return Array.from({ length: floodFlowsPerTick }, (_, j) => ({
    timestamp: spaced(j, floodFlowsPerTick, now),
    src_ip: `203.0.113.${((tick + j) % floodShape.sources) + 1}`,
    dst_ip: floodDestination(n),
    src_port: 1024 + ((tick * 131 + j * 977) % 64_000),
    dst_port: floodShape.port,
    protocol: 'udp',
    packets: floodShape.packetsPerFlow,
    bytes: floodShape.packetsPerFlow * floodShape.packetBytes,
  }));
}

/** Starts the workspace's traffic now; `stop()` ends it and resolves, once every post is answered, with the answers by status. */
export function floodTraffic(url: string, key: string, sizes: FloodSizes) {
  const started = Date.now();
  const startOf = (n: number) => started + leadMs + n * sizes.spacingMs;
  const floods: FloodRecord[] = Array.from({ length: sizes.floods }, (_, n) => ({ destination: floodDestination(n), posts: 0, refusedPosts: 0 }));
  const statuses: Record<number, number> = {};
  const answers: Array<Promise<void>> = [];
  const answered = (active: number[], status: number) => {
    const at = Date.now();
    statuses[status] = (statuses[status] ?? 0) + 1;
    for (const n of active) {
      const flood = floods[n]!;
      if (status !== 201) flood.refusedPosts += 1;
      else if (!(at >= (flood.storedAt ?? Infinity))) flood.storedAt = at;
    }
  };
  const posting = pacedLoop(
    tickMs,
    (tick) => {
      const now = Date.now();
      const active = floods.flatMap((_, n) => (now >= startOf(n) && now < startOf(n) + sizes.durationMs ? [n] : []));
      for (const n of active) {
        floods[n]!.startedAt ??= now;
        floods[n]!.firstFlowTs ??= spaced(0, floodFlowsPerTick, now);
        floods[n]!.posts += 1;
      }
      const body = [...ordinaryFlows(tick, now), ...active.flatMap((n) => floodFlows(n, tick, now))].map((f) => JSON.stringify(f)).join('\n');
      // A post that failed outright (no answer) counts as status 0.
      answers.push(call(url, 'POST', '/flow', key, body, 'application/x-ndjson').then((res) => answered(active, res.status), () => answered(active, 0)));
    },
    started,
  );
  return {
    floods,
    /** When the last flood's last flows are posted. */
    endsAt: startOf(sizes.floods - 1) + sizes.durationMs,
    async stop(): Promise<Record<number, number>> {
      await posting.stop();
      await Promise.all(answers);
      return statuses;
    },
  };
}
