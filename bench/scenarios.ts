import { fork } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { connect, headers as natsHeaders, RetentionPolicy, StorageType } from 'nats';
import type { LoadResult } from './http-load';
import { call, mintKey, postFlows, storedFlows, timedGet, waitUntil } from './client';
import { flowBatches, metricEvents, percentile, type FlowBatches } from './data';
import { pacedLoop } from './paced';
import type { BenchStack } from './stack';

export interface Sizes {
  e2eFlows: number;
  storedFlows: number;
  replayFlows: number;
  singleSeconds: number;
  incidentSeconds: number;
  queryRuns: number;
  metricEvents: number;
  /** Flows seeded over 30 days for the top-talkers scenario. */
  topFlows: number;
  /** Rounds of each side in scenario 11, the cost of syncing. */
  syncRounds: number;
}

export const fullSizes: Sizes = { e2eFlows: 1_000_000, storedFlows: 10_000_000, replayFlows: 1_000_000, singleSeconds: 20, incidentSeconds: 20, queryRuns: 40, metricEvents: 200_000, topFlows: 100_000_000, syncRounds: 3 };
/** The smoke run's (`--quick`, bench-smoke.test.ts): every scenario runs, on sizes that only show the harness works (at 1,000,000 top-talker flows it was still seeding them when it ran out of 290 s on 2026-11-29; not timed apart). */
export const quickSizes: Sizes = { e2eFlows: 50_000, storedFlows: 150_000, replayFlows: 50_000, singleSeconds: 3, incidentSeconds: 4, queryRuns: 5, metricEvents: 10_000, topFlows: 200_000, syncRounds: 1 };

const day = 86_400_000;
const batchSize = 5_000;
const clients = 4;

/**
 * Scenario 1: NDJSON batches by concurrent clients, timed until exactly the
 * flows sent are in ClickHouse. More than that fails the run: a doubled
 * write would otherwise stop the clock before every flow was stored. The
 * count is asked again after the clock stopped, so a double that lands just
 * after is caught too.
 */
export async function batchedEndToEnd(stack: Pick<BenchStack, 'url'>, key: string, data: FlowBatches, range: { from: number; to: number }) {
  const started = performance.now();
  await postFlows(stack.url, key, data.bodies, clients);
  const accepted = performance.now();
  const exactly = async () => {
    const stored = await storedFlows(stack.url, key, range.from, range.to);
    if (stored > data.flows) throw new Error(`scenario 1 stored ${stored} flows of ${data.flows} sent: doubled`);
    return stored === data.flows;
  };
  await waitUntil(exactly, 600_000, 'every flow in ClickHouse', 20);
  const seconds = (performance.now() - started) / 1000;
  await new Promise((r) => setTimeout(r, 2_000));
  await waitUntil(exactly, 60_000, 'the count asked again (the key may be out of query budget)', 500);
  return { flows_per_s: data.flows / seconds, accepted_flows_per_s: data.flows / ((accepted - started) / 1000) };
}

/** Baseline: the same bodies published straight to a JetStream stream from this process, 16 in flight. */
export async function rawJetStream(natsUrl: string, data: FlowBatches) {
  const nc = await connect({ servers: natsUrl });
  const jsm = await nc.jetstreamManager();
  const id = randomBytes(4).toString('hex');
  const stream = `BENCH_RAW_${id}`;
  await jsm.streams.add({ name: stream, subjects: [`benchraw.${id}`], storage: StorageType.File, retention: RetentionPolicy.Limits });
  const js = nc.jetstream();
  const started = performance.now();
  let next = 0;
  const publisher = async () => {
    while (next < data.bodies.length) {
      const body = data.bodies[next++]!;
      const h = natsHeaders();
      h.set('Nettel-Count', String(batchSize));
      await js.publish(`benchraw.${id}`, Buffer.from(body), { headers: h, msgID: `${id}-${next}` });
    }
  };
  await Promise.all(Array.from({ length: 16 }, publisher));
  const seconds = (performance.now() - started) / 1000;
  await jsm.streams.delete(stream);
  await nc.drain();
  return data.flows / seconds;
}

/** One flow per request with keep-alive at concurrency 64 for `seconds`, by autocannon in its own process. */
export function runLoad(url: string, key: string, seconds: number): Promise<LoadResult> {
  const child = fork(path.join(__dirname, 'http-load.js'), { stdio: 'inherit' });
  return new Promise((resolve, reject) => {
    child.once('message', (m) => resolve(m as LoadResult));
    child.once('exit', (code) => code !== 0 && reject(new Error(`load generator exited with ${code}`)));
    child.send({
      url,
      connections: 64,
      durationSeconds: seconds,
      body: JSON.stringify({ src_ip: '192.0.2.1', dst_ip: '198.51.100.1', bytes: 1500, packets: 3, protocol: 'tcp' }),
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    });
  });
}

/** Scenario 2: one flow per request at concurrency 64, and the bare http baseline. */
export async function singleIngest(stack: BenchStack, key: string, seconds: number) {
  const service = await runLoad(`${stack.url}/flow`, key, seconds);
  const bare = fork(path.join(__dirname, 'bare-server.js'), { stdio: 'inherit' });
  const port = await new Promise<number>((resolve) => bare.once('message', (m: { port: number }) => resolve(m.port)));
  const baseline = await runLoad(`http://127.0.0.1:${port}/flow`, key, seconds);
  bare.kill('SIGTERM');
  return { service, baseline };
}

/** What a background load did: flows it was due to post by its stop, posted, and answered 202 or otherwise. */
export interface LoadOutcome {
  due: number;
  posted: number;
  accepted: number;
  refused: number;
  /** Requests by the status they were answered with. */
  statuses: Record<number, number>;
  /** Set when fewer than 95 % of the flows due were accepted (`POST /flow` answers 201): the figures measured under it are not reported. */
  short?: string;
}

/** The share of the due flows a load must have had accepted for the figures under it to count. */
const fullLoadShare = 0.95;

/**
 * Scenario 3's load, which the automation and flood scenarios run under too: flows in
 * 5,000-flow batches at `flowsPerSecond`, into a workspace of their own,
 * posted on schedule without waiting for each answer until `stop()`, which
 * waits for the answers and counts them. `seconds` of distinct bodies are
 * made; a longer run posts them again from the first.
 */
export async function backgroundFlows(stack: Pick<BenchStack, 'url' | 'adminKey'>, flowsPerSecond: number, seconds: number) {
  const load = await mintKey(stack.url, stack.adminKey);
  const started = Date.now();
  const bodies = flowBatches({ flows: Math.ceil(flowsPerSecond * seconds) + batchSize, batchSize, from: started - 3_600_000, spanMs: 3_600_000, seed: 3 }).bodies;
  const intervalMs = (batchSize / flowsPerSecond) * 1000;
  let posted = 0;
  let accepted = 0;
  let refused = 0;
  const statuses: Record<number, number> = {};
  const answers: Array<Promise<void>> = [];
  const posting = pacedLoop(
    intervalMs,
    (i) => {
      answers.push(
        call(stack.url, 'POST', '/flow', load.key, bodies[i % bodies.length]!, 'application/x-ndjson').then(
          (res) => {
            statuses[res.status] = (statuses[res.status] ?? 0) + 1;
            if (res.status === 201) accepted += batchSize;
            else refused += batchSize;
          },
          () => void (refused += batchSize),
        ),
      );
      posted += batchSize;
    },
    started,
  );
  return {
    /** Stops posting; resolves, once every post is answered, with what the load did. */
    async stop(): Promise<LoadOutcome> {
      await posting.stop();
      const due = Math.floor(((Date.now() - started) / 1000) * flowsPerSecond);
      await Promise.all(answers);
      const outcome: LoadOutcome = { due, posted, accepted, refused, statuses };
      if (accepted < due * fullLoadShare) outcome.short = `the background load had ${accepted} of the ${due} flows due accepted (${refused} refused or failed): the service did not carry the load the figure is named for`;
      return outcome;
    },
  };
}

/** Scenario 3: a signal every 100 ms under half the peak flow load; latency from POST to the listed incident. */
export async function incidentLatency(
  stack: BenchStack,
  adminKey: string,
  seconds: number,
  halfPeakFlowsPerSecond: number,
  /** Called with the signals' workspace key before the first signal (the webhook probe subscribes there). */
  beforeSignals?: (key: string) => Promise<void>,
) {
  const signals = await mintKey(stack.url, adminKey);
  await beforeSignals?.(signals.key);
  const background = await backgroundFlows({ url: stack.url, adminKey }, halfPeakFlowsPerSecond, seconds);
  const started = Date.now();
  const stopAt = started + seconds * 1000;
  const posted = new Map<string, number>();
  const seen = new Map<string, number>();
  let polling = true;
  const poller = (async () => {
    while (polling || seen.size < posted.size) {
      const res = await call<{ data: Array<{ service: string }> }>(stack.url, 'GET', `/v1/incidents?limit=1000&since=${started - 60_000}`, signals.key);
      const now = performance.now();
      for (const i of res.body.data ?? []) if (!seen.has(i.service) && posted.has(i.service)) seen.set(i.service, now);
      if (!polling && Date.now() > stopAt + 30_000) break;
      await new Promise((r) => setTimeout(r, 10));
    }
  })();
  for (let n = 0; Date.now() < stopAt; n += 1) {
    const service = `lat-${n}`;
    posted.set(service, performance.now());
    await call(stack.url, 'POST', '/ingest', signals.key, { telemetry: 'dns', service, environment: 'prod', region: 'eu', latency_ms: 5 });
    await new Promise((r) => setTimeout(r, 100));
  }
  polling = false;
  const [load] = await Promise.all([background.stop(), poller]);
  const latencies = [...posted.entries()].map(([s, t]) => (seen.get(s) ?? Infinity) - t);
  // A load that fell short makes the latencies a lighter scenario's: reported as invalid, not as figures.
  const valid = load.short === undefined;
  return { p50_ms: valid ? percentile(latencies, 50) : NaN, p99_ms: valid ? percentile(latencies, 99) : NaN, signals: posted.size, missing: latencies.filter((l) => l === Infinity).length, posted, load };
}

/** Scenario 4: top talkers and 1-minute series over one hour and one day of stored flows. */
export async function analystQueries(stack: BenchStack, key: string, sizes: Sizes, alreadyStored: number, now: number) {
  const more = flowBatches({ flows: sizes.storedFlows - alreadyStored, batchSize, from: now - day, spanMs: day - 60_000, seed: 4 });
  await postFlows(stack.url, key, more.bodies, clients);
  for (const body of metricEvents(sizes.metricEvents, now - day, day - 60_000)) {
    const res = await call(stack.url, 'POST', '/v1/ingest/events', key, body, 'application/x-ndjson');
    if (res.status !== 202) throw new Error(`POST /v1/ingest/events answered ${res.status}`);
  }
  await waitUntil(async () => (await storedFlows(stack.url, key, now - day - 60_000, now + 60_000)) >= sizes.storedFlows, 900_000, 'every stored flow', 200);
  const time = (route: string) => timedGet(stack.url, route, key);
  const measure = async (from: number) => {
    const samples: number[] = [];
    for (let i = 0; i < sizes.queryRuns; i += 1) {
      samples.push(await time(`/v1/telemetry/flows/top?by=dst_ip&metric=bytes&limit=10&from=${from}&to=${now}`));
      samples.push(await time(`/v1/telemetry/flows/top?by=src_ip&metric=packets&limit=10&from=${from}&to=${now}`));
      samples.push(await time(`/v1/telemetry/metrics/series?service=svc-1&metric=latency_ms&step=60&from=${from}&to=${now}`));
    }
    return { p50_ms: percentile(samples, 50), p99_ms: percentile(samples, 99) };
  };
  return { hour: await measure(now - 3_600_000), day: await measure(now - day) };
}

/** Scenario 5: a replay over a traffic incident with `flows` flows of history, approved as soon as it waits. */
export async function replayOfFlows(stack: BenchStack, adminKey: string, flows: number) {
  const operator = await mintKey(stack.url, adminKey);
  const approver = await mintKey(stack.url, adminKey, { org_id: operator.org_id, role: 'approver' });
  const dst = '198.51.100.77';
  const now = Math.floor(Date.now() / 60_000) * 60_000;
  const bytesPerFlow = Math.ceil((2e9 * 5) / flows);
  const data = flowBatches({ flows, batchSize: 10_000, from: now - 300_000, spanMs: 299_000, dst, seed: 5 });
  const bodies = data.bodies.map((b) => b.replace(/"bytes":\d+/g, `"bytes":${bytesPerFlow}`));
  await postFlows(stack.url, operator.key, bodies, clients);
  await waitUntil(async () => (await storedFlows(stack.url, operator.key, now - 600_000, now + 60_000)) >= flows, 600_000, 'the replay history');
  let incidentId = '';
  await waitUntil(async () => {
    const res = await call<{ data: Array<{ id: string; signal_count: number }> }>(stack.url, 'GET', `/v1/incidents?service=${dst}`, operator.key);
    incidentId = res.body.data?.[0]?.id ?? '';
    return (res.body.data?.[0]?.signal_count ?? 0) >= 5;
  }, 60_000, 'the traffic incident');
  await call(stack.url, 'POST', '/v1/policies', operator.key, { name: 'bench gate', requires_approval: true });
  const started = performance.now();
  const replay = await call<{ replay_id: string }>(stack.url, 'POST', '/v1/replay', operator.key, { incident_id: incidentId });
  let status = '';
  let report: { parity?: boolean; automation?: { flows_examined: number } } = {};
  await waitUntil(async () => {
    const res = await call<{ status: string; report: typeof report }>(stack.url, 'GET', `/v1/replays/${replay.body.replay_id}`, operator.key);
    status = res.body.status;
    report = res.body.report ?? {};
    if (status === 'awaiting_approval') await call(stack.url, 'POST', `/v1/replays/${replay.body.replay_id}/approve`, approver.key);
    return ['completed', 'failed', 'denied', 'expired'].includes(status);
  }, 120_000, 'the replay', 20);
  return { seconds: (performance.now() - started) / 1000, status, parity: report.parity, flows_examined: report.automation?.flows_examined };
}
