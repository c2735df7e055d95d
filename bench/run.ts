import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadConfig, type Config } from '../service/config';
import { automationLatency, automationSizes } from './automation';
import { clusterScenario } from './cluster';
import { enrichmentCost } from './enrichment-lookup';
import { mintKey } from './client';
import { collectorScenario, collectorSizes } from './collector';
import { flowBatches } from './data';
import { floodLatency } from './flood';
import { floodSizes } from './flood-traffic';
import { summarizeProfiles } from './profile-summary';
import { machine, targets, writeBenchmarks, type BenchResult } from './report';
import {
  analystQueries,
  batchedEndToEnd,
  fullSizes,
  incidentLatency,
  quickSizes,
  rawJetStream,
  replayOfFlows,
  singleIngest,
} from './scenarios';
import { chdbFolderOf, peakRssMib, startBenchStack, type BenchStack } from './stack';
import { recoveryDrain } from './recovery';
import { endToEndBytesPerFlow, engineInserts, rawClickHouse, serviceStore, type ClickHouseSettings } from './storage-scenarios';
import { syncCost, type SyncCost } from './sync-cost';
import { topTalkersOverSeededFlows } from './top-talkers';
import { allowLoopbackWebhooks, webhookProbe } from './webhooks';
import { parseRunArgs, usage, type RunArgs } from './run-args';

/**
 * `npm run bench [-- --quick] [-- --profile]`: every scenario of the
 * benchmark against the stack as `npm start` runs it, each throughput beside
 * a baseline taken in the same run. Prints one JSON object last on stdout;
 * a full run rewrites the table in BENCHMARKS.md.
 */
/** This run's arguments; `--help` prints the usage and an unknown argument fails the run before anything starts. */
function parseCommandLine(): RunArgs {
  try {
    const parsed = parseRunArgs(process.argv.slice(2));
    if (parsed !== 'help') return parsed;
    process.stdout.write(`${usage}\n`);
    process.exit(0);
  } catch (err) {
    process.stderr.write(`${(err as Error).message}\n`);
    process.exit(2);
  }
}

const args = parseCommandLine();
// --only=e2e,single,... runs a subset while profiling; a run that skips any scenario never writes BENCHMARKS.md.
const { quick, only } = args;
const runs = (name: string) => !only || only.includes(name);
// Scenario 13 holds each mitigation for its minute and more, scenario 14 floods for minutes: a full run, or one that names them, not the smoke run.
const runsAutomation = only ? only.includes('automation') : !quick;
const runsFlood = only ? only.includes('flood') : !quick;
// Scenario 15 starts services of its own on a ClickHouse server three times over: a full run, or one that names it.
const runsCluster = only ? only.includes('cluster') : !quick;
const skipped = { flows_per_s: NaN, accepted_flows_per_s: NaN };
const sizes = quick ? quickSizes : fullSizes;
const log = (msg: string) => process.stderr.write(`[bench] ${msg}\n`);
const settingsOf = (config: Config): ClickHouseSettings => ({ ...config.clickhouse });

/** Runs every selected scenario on the running service; what each measured, by scenario. */
async function measure(stack: BenchStack, config: Config) {
  const now = Date.now();
  const day = 86_400_000;
  const e2eData = flowBatches({ flows: sizes.e2eFlows, batchSize: 5_000, from: now - day, spanMs: day - 60_000, seed: 1 });
  const e2eRange = { from: now - day - 60_000, to: now + 60_000 };
  // First, while the stack's service is idle: ingest on a syncing nats-server and on one that syncs every two minutes.
  const syncing = runs('sync') ? await syncCost(stack, config, sizes, log) : undefined;

  log(`raw JetStream publish of ${sizes.e2eFlows} flows`);
  const rawJs = runs('rawjs') ? await rawJetStream(stack.natsUrl, e2eData) : NaN;
  log(`raw ClickHouse insert of ${sizes.e2eFlows} rows`);
  const rawCh = runs('rawch') ? await rawClickHouse(stack.dir, e2eData, settingsOf(config)) : NaN;
  log(`the engine's insert of the same ${sizes.e2eFlows} rows from JSONEachRow and Native files`);
  const engine = runs('engine') ? await engineInserts(stack.dir, e2eData, config.clickhouse.retention) : undefined;
  log('the enrichment of a flow, in this process');
  const enrichment = runs('enrichment') ? await enrichmentCost(quick ? 50_000 : 200_000) : { us_per_flow: NaN, plain_line_us: NaN, enriched_line_us: NaN };
  log(`batched end to end: ${sizes.e2eFlows} flows`);
  const analyst = await mintKey(stack.url, stack.adminKey);
  const e2e = runs('e2e') ? await batchedEndToEnd(stack, analyst.key, e2eData, e2eRange) : skipped;
  const e2eRows = { orgId: analyst.org_id, before: Date.now() };
  log(`recovery: ${sizes.e2eFlows} flows with Idempotency-Key, the service killed -9 at the last acknowledgement, the backlog drained by a new start`);
  const recovery = runs('recovery') ? await recoveryDrain(stack, e2eData, e2eRange) : undefined;
  const cluster = runsCluster ? await clusterScenario(stack, config, e2eData, e2eRange, log) : undefined;

  log(`one flow per request for ${sizes.singleSeconds}s at concurrency 64, then the bare http baseline`);
  const ingestKey = await mintKey(stack.url, stack.adminKey, { role: 'ingest' });
  const noLoad = { rps: NaN, p50_ms: NaN, p99_ms: NaN };
  const single = runs('single') ? await singleIngest(stack, ingestKey.key, sizes.singleSeconds) : { service: noLoad, baseline: noLoad };

  log(`incident latency for ${sizes.incidentSeconds}s under half the peak flow load`);
  const halfPeak = (Number.isNaN(e2e.flows_per_s) ? 50_000 : e2e.flows_per_s) / 2;
  // Webhook delivery latency is measured beside the incident latency, under the same load.
  const probe = runs('incident') ? await webhookProbe(stack.url) : undefined;
  const measured = runs('incident') ? await incidentLatency(stack, stack.adminKey, sizes.incidentSeconds, halfPeak, (key) => probe!.subscribe(key)) : undefined;
  const incidents = measured ? { p50_ms: measured.p50_ms, p99_ms: measured.p99_ms, signals: measured.signals, missing: measured.missing, background_load: measured.load } : { p50_ms: NaN, p99_ms: NaN };
  const delivered = probe && measured ? await probe.result(measured.posted) : undefined;
  // Measured under the same background load: a load that fell short voids them as it voids the incidents' figures.
  const webhooks = delivered && !measured?.load.short ? delivered : { p50_ms: NaN, p99_ms: NaN };
  const automationRun = quick ? automationSizes.quick : automationSizes.full;
  log(`automation: ${automationRun.incidents} incidents under the same load, each blackholed for a minute, the routes timed in BIRD`);
  const automation = runsAutomation ? await automationLatency(stack, halfPeak, automationRun, log) : undefined;
  const floodRun = quick ? floodSizes.quick : floodSizes.full;
  log(`flood: ${floodRun.floods} floods ${floodRun.spacingMs} ms apart under the same load, each on its own destination, timed to the fingerprint's rule in BIRD`);
  const flood = runsFlood ? await floodLatency(stack, halfPeak, floodRun, log) : undefined;

  log(`analyst queries over ${sizes.storedFlows} stored flows`);
  const noQuery = { p50_ms: NaN, p99_ms: NaN };
  const queries = runs('query') && runs('e2e') ? await analystQueries(stack, analyst.key, sizes, sizes.e2eFlows, now) : { hour: noQuery, day: noQuery };

  log(`replay of an incident with ${sizes.replayFlows} flows of history`);
  const replay = runs('replay') ? await replayOfFlows(stack, stack.adminKey, sizes.replayFlows) : { seconds: NaN };
  // Read before the collector scenario, so the API's peak stays comparable with runs before the collector; its peak after is in the details.
  const rss = serviceRss(stack);
  const collector = runs('collector') ? await collectorScenario(stack, config, quick ? collectorSizes.quick : collectorSizes.full, log) : undefined;
  const rssAfterCollector = collector && serviceRss(stack);
  return { syncing, rawJs, rawCh, engine, enrichment, e2e, e2eRows, recovery, cluster, single, incidents, webhooks, automation, flood, queries, replay, rss, collector, rssAfterCollector };
}

/** Peak RSS of the API process and of the workers' process, read while they still run. */
function serviceRss(stack: BenchStack) {
  const api = stack.processes.find((p) => p.role.includes('api'))!;
  const workers = stack.processes.find((p) => p.role.includes('stream-workers'))!;
  return { api: peakRssMib(api.child.pid!), workers: peakRssMib(workers.child.pid!) };
}

/** What needs the service stopped: the bytes of its stored flows (chDB binds its folder to one process), then a service on a seeded month. */
async function measureAfterStop(stack: BenchStack, config: Config, e2eRows: { orgId: string; before: number }) {
  await stack.stopService();
  log('bytes per stored flow of the end-to-end run');
  const store = serviceStore(settingsOf(config), chdbFolderOf(stack.dataDir), stack.database);
  const stored = runs('bytes') && runs('e2e') ? await endToEndBytesPerFlow(store, e2eRows.orgId, e2eRows.before) : undefined;
  log(`top talkers over ${sizes.topFlows} flows seeded over 30 days`);
  const top = runs('top') ? await topTalkersOverSeededFlows(stack, settingsOf(config), sizes, log) : undefined;
  return { stored, top };
}

/** Scenario 11's figures, each side's medians. */
const syncCostKeys = (s: SyncCost | undefined) => ({
  synced_nats_raw_jetstream_events_per_s: Math.round(s?.sync.raw_jetstream_events_per_s ?? NaN),
  unsynced_nats_raw_jetstream_events_per_s: Math.round(s?.nosync.raw_jetstream_events_per_s ?? NaN),
  synced_nats_accepted_flows_per_s: Math.round(s?.sync.accepted_flows_per_s ?? NaN),
  unsynced_nats_accepted_flows_per_s: Math.round(s?.nosync.accepted_flows_per_s ?? NaN),
  synced_nats_single_ingest_rps: Math.round(s?.sync.single_ingest_rps ?? NaN),
  unsynced_nats_single_ingest_rps: Math.round(s?.nosync.single_ingest_rps ?? NaN),
  synced_nats_publish_ack_p50_ms: s?.sync.publish_ack_p50_ms ?? NaN,
  unsynced_nats_publish_ack_p50_ms: s?.nosync.publish_ack_p50_ms ?? NaN,
});

type Measured = Awaited<ReturnType<typeof measure>> & Awaited<ReturnType<typeof measureAfterStop>>;
const round1 = (n: number) => Math.round(n * 10) / 10;

/** The peak RSS of the nats-server the bench started; null when the environment's NATS_URL named one. */
function natsPeakRssMib(stack: BenchStack): number {
  const nats = stack.engines.find((e) => e.name === 'nats-server');
  return nats?.pid ? peakRssMib(nats.pid) : NaN;
}

/** Scenario 9's keys: per query family (the top talkers, the analysts' dimensions, a filter, a sankey), the p99 of each range. */
function topKeys(top: Measured['top']) {
  const ranged = (prefix: string, p99: Record<'1h' | '1d' | '30d', number> | undefined) =>
    Object.fromEntries((['1h', '1d', '30d'] as const).map((r) => [`${prefix}_${r}_p99_ms`, round1(p99?.[r] ?? NaN)]));
  return {
    ...ranged('top', top?.p99_ms),
    ...ranged('top_dims', top?.dimensions_p99_ms),
    ...ranged('top_filtered', top?.filtered_p99_ms),
    ...ranged('top_sankey', top?.sankey_p99_ms),
  } as Pick<BenchResult, Extract<keyof BenchResult, `top_${string}`>>;
}

/** Scenario 15's keys (null when it did not run). */
function clusterKeys(c: Measured['cluster']) {
  return {
    cluster_e2e_one_worker_flows_per_s: Math.round(c?.one_worker_flows_per_s ?? NaN),
    cluster_e2e_two_workers_flows_per_s: Math.round(c?.two_workers_flows_per_s ?? NaN),
    cluster_drain_after_kill_flows_per_s: Math.round(c?.drain_after_kill_flows_per_s ?? NaN),
  };
}

/** Scenario 14's keys (null when it did not run). */
function floodKeys(f: Measured['flood']) {
  return {
    flood_stored_to_incident_p50_ms: Math.round(f?.incident.p50_ms ?? NaN),
    flood_stored_to_incident_p99_ms: Math.round(f?.incident.p99_ms ?? NaN),
    flood_stored_to_rule_p50_ms: Math.round(f?.rule.p50_ms ?? NaN),
    flood_stored_to_rule_p99_ms: Math.round(f?.rule.p99_ms ?? NaN),
  };
}

/** The keys BENCHMARKS.md and the smoke test read, and the details beside them. */
function report(stack: BenchStack, m: Measured) {
  const result: BenchResult = {
    batched_e2e_flows_per_s: Math.round(m.e2e.flows_per_s),
    recovery_drain_flows_per_s: Math.round(m.recovery?.drain_flows_per_s ?? NaN),
    batched_accepted_flows_per_s: Math.round(m.e2e.accepted_flows_per_s),
    raw_jetstream_events_per_s: Math.round(m.rawJs),
    raw_clickhouse_rows_per_s: Math.round(m.rawCh),
    engine_jsoneachrow_rows_per_s: Math.round(m.engine?.jsoneachrow_rows_per_s ?? NaN),
    engine_native_rows_per_s: Math.round(m.engine?.native_rows_per_s ?? NaN),
    bytes_per_flow: Math.round((m.stored?.bytes_per_flow ?? NaN) * 100) / 100,
    single_ingest_rps: Math.round(m.single.service.rps),
    bare_http_rps: Math.round(m.single.baseline.rps),
    single_ingest_p50_ms: m.single.service.p50_ms,
    single_ingest_p99_ms: m.single.service.p99_ms,
    incident_latency_p50_ms: Math.round(m.incidents.p50_ms),
    incident_latency_p99_ms: Math.round(m.incidents.p99_ms),
    webhook_delivery_p99_ms: Math.round(m.webhooks.p99_ms),
    automation_detect_to_announce_p99_ms: Math.round(m.automation?.announce.p99_ms ?? NaN),
    automation_withdraw_lag_p99_ms: Math.round(m.automation?.withdraw.p99_ms ?? NaN),
    ...floodKeys(m.flood),
    query_1h_p99_ms: round1(m.queries.hour.p99_ms),
    query_1d_p99_ms: round1(m.queries.day.p99_ms),
    ...topKeys(m.top),
    replay_1m_s: Math.round(m.replay.seconds * 1000) / 1000,
    api_rss_mib: m.rss.api,
    workers_rss_mib: m.rss.workers,
    nats_rss_mib: natsPeakRssMib(stack),
    enrichment_us_per_flow: m.enrichment.us_per_flow,
    enrichment_share_of_e2e_pct: Math.round(m.enrichment.us_per_flow * (m.e2e.flows_per_s / 1e6) * 10_000) / 100,
    collector_flows_per_s: Math.round(m.collector?.flows_per_s ?? NaN),
    collector_loss_pct: m.collector?.loss_pct ?? NaN,
    goflow2_alone_flows_per_s: Math.round(m.collector?.goflow2_alone_flows_per_s ?? NaN),
    ...syncCostKeys(m.syncing),
    ...clusterKeys(m.cluster),
  };
  const details = {
    roles_per_process: stack.processes.map((p) => p.role),
    engine_inserts: m.engine,
    sync_cost: m.syncing,
    stored_e2e_flows: m.stored,
    recovery: m.recovery,
    enrichment: m.enrichment,
    cluster: m.cluster?.details,
    single_ingest: m.single.service,
    bare_http: m.single.baseline,
    incidents: m.incidents,
    webhooks: m.webhooks,
    automation: m.automation?.details,
    flood: m.flood?.details,
    queries: m.queries,
    top_talkers: m.top && { seed: m.top.seed, ranges: m.top.ranges },
    replay: m.replay,
    collector: m.collector && { ...m.collector.details, rss_mib_after: m.rssAfterCollector },
    engines_rss_mib: Object.fromEntries(stack.engines.map((e) => [e.name, e.pid ? peakRssMib(e.pid) : null])),
    targets: Object.fromEntries(targets.map((t) => [t.key, t.holds(result)])),
  };
  return { result, details };
}

async function main(): Promise<void> {
  const config = loadConfig(process.env);
  const profileDir = args.profile ? fs.mkdtempSync(path.join(os.tmpdir(), 'nettel-profile-')) : undefined;
  allowLoopbackWebhooks();
  const stack = await startBenchStack({ cpuProfileDir: profileDir, router: runsAutomation || runsFlood });
  const extra: Record<string, unknown> = { mode: quick ? 'quick' : 'full', sizes, machine: machine() };
  try {
    const running = await measure(stack, config);
    const stopped = await measureAfterStop(stack, config, running.e2eRows);
    const { result, details } = report(stack, { ...running, ...stopped });
    Object.assign(extra, details);
    await stack.stop();
    if (profileDir) extra.profile = summarizeProfiles(profileDir, 25);
    if ((!quick || args.write) && !only) writeBenchmarks(path.resolve(__dirname, '../../BENCHMARKS.md'), result, extra);
    log(JSON.stringify(extra));
    process.stdout.write(JSON.stringify(result) + '\n');
  } catch (err) {
    await stack.stop().catch(() => undefined);
    throw err;
  }
}

main().catch((err) => {
  process.stderr.write(`bench failed: ${(err as Error).stack ?? err}\n`);
  process.exit(1);
});
