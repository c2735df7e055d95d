import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { connect, RetentionPolicy, StorageType } from 'nats';
import { freePort } from '../engines/local-process';
import { createLogger } from '../observability/logger';
import type { Config } from '../service/config';
import { mintKey } from './client';
import { flowBatches, percentile } from './data';
import { batchedEndToEnd, rawJetStream, runLoad, type Sizes } from './scenarios';
import { benchNatsServer, type BenchStack, type ServiceRun } from './stack';

/**
 * Scenario 11, the cost of syncing. Two more services, each on its own
 * nats-server: the stack's, which syncs every write to disk before it
 * acknowledges it (`sync_interval: always`), and a second one that leaves
 * syncing to the server's default (every two minutes). The two sides are
 * measured in alternating rounds (the first side of each round alternates
 * too), so both see the same background load on a shared machine; each
 * figure is the median of its side's rounds:
 * - the raw JetStream publish of scenario 1's bodies from this process;
 * - scenario 1 up to the last acknowledgement (every round waits until its
 *   flows are stored, so no round's writes overlap the next);
 * - scenario 2's one flow per request, service only;
 * - one publish at a time of a one-flow message, 1,000 times: the
 *   acknowledgement's median latency, which holds the sync itself.
 * Skipped on a NATS the environment names: its syncing is not the bench's.
 */
type Side = 'sync' | 'nosync';

interface SideRun {
  natsUrl: string;
  service: ServiceRun;
  raw: number[];
  accepted: number[];
  single: number[];
  latency: number[];
}

export type SyncCost = Record<
  Side,
  {
    raw_jetstream_events_per_s: number;
    accepted_flows_per_s: number;
    single_ingest_rps: number;
    publish_ack_p50_ms: number;
    rounds: { raw: number[]; accepted: number[]; single: number[]; publish_ack_p50_ms: number[] };
  }
>;

export async function syncCost(stack: BenchStack, config: Config, sizes: Sizes, log: (msg: string) => void): Promise<SyncCost | undefined> {
  if (config.nats.url) return undefined;
  const port = await freePort();
  const unsynced = benchNatsServer(config, path.join(stack.dir, 'nats-interval'), port, 'interval', createLogger('warn', 'bench'));
  await unsynced.start();
  const sides: Partial<Record<Side, SideRun>> = {};
  try {
    for (const [side, natsUrl] of [['sync', stack.natsUrl], ['nosync', `nats://127.0.0.1:${port}`]] as const) {
      const database = `bench_${side}_${randomBytes(4).toString('hex')}`;
      const service = await stack.launch({ dataDir: path.join(stack.dir, `service-${side}`), database, natsUrl, withoutCollector: true });
      sides[side] = { natsUrl, service, raw: [], accepted: [], single: [], latency: [] };
    }
    for (let round = 0; round < sizes.syncRounds; round += 1) {
      log(`the cost of syncing: round ${round + 1} of ${sizes.syncRounds}`);
      const order: Side[] = round % 2 === 0 ? ['sync', 'nosync'] : ['nosync', 'sync'];
      for (const side of order) await measureRound(sides[side]!, stack.adminKey, sizes, round);
    }
    const median = (values: number[]) => percentile(values, 50);
    const figures = ({ raw, accepted, single, latency }: SideRun) => ({
      raw_jetstream_events_per_s: median(raw),
      accepted_flows_per_s: median(accepted),
      single_ingest_rps: median(single),
      publish_ack_p50_ms: median(latency),
      rounds: { raw: raw.map(Math.round), accepted: accepted.map(Math.round), single: single.map(Math.round), publish_ack_p50_ms: latency },
    });
    return { sync: figures(sides.sync!), nosync: figures(sides.nosync!) };
  } finally {
    for (const side of Object.values(sides)) await side.service.stop();
    await unsynced.stop();
  }
}

/** One round on one side: a fifth of scenario 1's flows, in a workspace of the round's own. */
async function measureRound(side: SideRun, adminKey: string, sizes: Sizes, round: number): Promise<void> {
  const now = Date.now();
  const hour = 3_600_000;
  const data = flowBatches({ flows: Math.ceil(sizes.e2eFlows / 5), batchSize: 5_000, from: now - hour, spanMs: hour - 60_000, seed: 11 + round });
  side.raw.push(await rawJetStream(side.natsUrl, data));
  side.latency.push(await publishAckP50(side.natsUrl));
  const key = await mintKey(side.service.url, adminKey);
  side.accepted.push((await batchedEndToEnd(side.service, key.key, data, { from: now - hour - 60_000, to: now + 60_000 })).accepted_flows_per_s);
  const ingest = await mintKey(side.service.url, adminKey, { role: 'ingest' });
  side.single.push((await runLoad(`${side.service.url}/flow`, ingest.key, Math.max(1, Math.round(sizes.singleSeconds / 4)))).rps);
}

/** The median acknowledgement latency of 1,000 one-flow messages published one at a time to a file stream, in ms. */
async function publishAckP50(natsUrl: string): Promise<number> {
  const nc = await connect({ servers: natsUrl });
  const id = randomBytes(4).toString('hex');
  try {
    const jsm = await nc.jetstreamManager();
    await jsm.streams.add({ name: `BENCH_ACK_${id}`, subjects: [`benchack.${id}`], storage: StorageType.File, retention: RetentionPolicy.Limits });
    try {
      const js = nc.jetstream();
      const body = Buffer.from(JSON.stringify({ src_ip: '192.0.2.1', dst_ip: '198.51.100.1', bytes: 1500, packets: 3, protocol: 'tcp' }));
      const latencies: number[] = [];
      for (let i = 0; i < 1_000; i += 1) {
        const started = performance.now();
        await js.publish(`benchack.${id}`, body);
        latencies.push(performance.now() - started);
      }
      return Math.round(percentile(latencies, 50) * 1000) / 1000;
    } finally {
      await jsm.streams.delete(`BENCH_ACK_${id}`);
    }
  } finally {
    await nc.drain();
  }
}
