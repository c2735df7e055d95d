import fs from 'node:fs';
import path from 'node:path';
import os from 'node:os';

export interface BenchResult {
  batched_e2e_flows_per_s: number;
  /** Recovery: the backlog a kill -9 left, drained by a new start (flows/s); issue 19 asks at least 0.8 × batched_e2e_flows_per_s. */
  recovery_drain_flows_per_s: number;
  raw_jetstream_events_per_s: number;
  raw_clickhouse_rows_per_s: number;
  engine_jsoneachrow_rows_per_s: number;
  engine_native_rows_per_s: number;
  bytes_per_flow: number;
  single_ingest_rps: number;
  bare_http_rps: number;
  single_ingest_p50_ms: number;
  single_ingest_p99_ms: number;
  incident_latency_p50_ms: number;
  incident_latency_p99_ms: number;
  webhook_delivery_p99_ms: number;
  /** Scenario 13: from a signal accepted to its incident's blackhole route in BIRD, with no approval asked, under scenario 3's load. */
  automation_detect_to_announce_p99_ms: number;
  /** Scenario 13: from a mitigation's end (the run's `ends_at`) to its route gone from BIRD. */
  automation_withdraw_lag_p99_ms: number;
  /** Scenario 14: from a flood's first flows stored (the earliest 201 of a post holding them) to its incident opened, under scenario 3's load. */
  flood_stored_to_incident_p50_ms: number;
  flood_stored_to_incident_p99_ms: number;
  /** Scenario 14: from a flood's first flows stored to its fingerprint's Flowspec rule in BIRD, with no approval asked. */
  flood_stored_to_rule_p50_ms: number;
  flood_stored_to_rule_p99_ms: number;
  query_1h_p99_ms: number;
  query_1d_p99_ms: number;
  top_1h_p99_ms: number;
  top_1d_p99_ms: number;
  top_30d_p99_ms: number;
  /** Scenario 9 beside the top talkers: top-N by destination AS and by source country (the slower), from the dimension rollups. */
  top_dims_1h_p99_ms: number;
  top_dims_1d_p99_ms: number;
  top_dims_30d_p99_ms: number;
  top_filtered_1h_p99_ms: number;
  top_filtered_1d_p99_ms: number;
  top_filtered_30d_p99_ms: number;
  top_sankey_1h_p99_ms: number;
  top_sankey_1d_p99_ms: number;
  top_sankey_30d_p99_ms: number;
  replay_1m_s: number;
  api_rss_mib: number;
  workers_rss_mib: number;
  /** The peak RSS of the nats-server the bench started (null on the environment's NATS_URL). */
  nats_rss_mib: number;
  /** Issue 33: the enrichment's CPU a flow (the stored line enriched, less the same line without), and that as a share of scenario 1's time a flow. */
  enrichment_us_per_flow: number;
  enrichment_share_of_e2e_pct: number;
  collector_flows_per_s: number;
  collector_loss_pct: number;
  goflow2_alone_flows_per_s: number;
  /** Scenario 1 up to the last acknowledgement (the API's answer follows JetStream's, after its sync). */
  batched_accepted_flows_per_s: number;
  /** Scenario 11: the same ingest on a nats-server that syncs every write before acknowledging it, and on one that leaves syncing to its default. */
  synced_nats_raw_jetstream_events_per_s: number;
  unsynced_nats_raw_jetstream_events_per_s: number;
  synced_nats_accepted_flows_per_s: number;
  unsynced_nats_accepted_flows_per_s: number;
  synced_nats_single_ingest_rps: number;
  unsynced_nats_single_ingest_rps: number;
  synced_nats_publish_ack_p50_ms: number;
  unsynced_nats_publish_ack_p50_ms: number;
  /** Scenario 15 (issue 36): scenario 1 with the stream workers as one process of their own, then as two, on a ClickHouse server. */
  cluster_e2e_one_worker_flows_per_s: number;
  cluster_e2e_two_workers_flows_per_s: number;
  /** Scenario 15: the backlog left when one of two stream-worker processes is killed -9, drained by the other (its ack wait included). */
  cluster_drain_after_kill_flows_per_s: number;
}

export function machine() {
  return {
    cores: os.cpus().length,
    cpu: os.cpus()[0]?.model ?? 'unknown',
    memory_gib: Math.round(os.totalmem() / 1024 ** 3),
    node: process.version,
  };
}

interface Target {
  key: keyof BenchResult;
  label: string;
  holds: (r: BenchResult) => boolean;
  text: string;
}

/** The targets each figure is held to (issue 37's where it set one: e2e, one flow per request, RSS, the drain, the collector). */
export const targets: Target[] = [
  {
    key: 'batched_e2e_flows_per_s',
    label: 'batched flows end to end',
    text: '≥ 300,000 /s and ≥ 0.7 × the engine\'s JSONEachRow insert of the same rows',
    holds: (r) => r.batched_e2e_flows_per_s >= 300_000 && r.batched_e2e_flows_per_s >= 0.7 * r.engine_jsoneachrow_rows_per_s,
  },
  {
    key: 'recovery_drain_flows_per_s',
    label: 'backlog drained after a kill -9',
    text: '≥ 0.8 × batched flows end to end',
    holds: (r) => r.recovery_drain_flows_per_s >= 0.8 * r.batched_e2e_flows_per_s,
  },
  { key: 'bytes_per_flow', label: 'bytes on disk per stored flow', text: '≤ 25', holds: (r) => r.bytes_per_flow <= 25 },
  { key: 'single_ingest_rps', label: 'one flow per request', text: '≥ 0.3 × bare http', holds: (r) => r.single_ingest_rps >= 0.3 * r.bare_http_rps },
  { key: 'single_ingest_p99_ms', label: 'one flow per request p99', text: '≤ 20 ms at concurrency 64', holds: (r) => r.single_ingest_p99_ms <= 20 },
  { key: 'incident_latency_p99_ms', label: 'incident latency p99 under load', text: '≤ 1,500 ms', holds: (r) => r.incident_latency_p99_ms <= 1500 },
  {
    key: 'automation_detect_to_announce_p99_ms',
    label: 'automation: signal accepted to route in BIRD, p99 under load',
    text: '≤ 2,000 ms',
    holds: (r) => r.automation_detect_to_announce_p99_ms <= 2000,
  },
  {
    key: 'automation_withdraw_lag_p99_ms',
    label: "automation: a mitigation's end to its route gone from BIRD, p99",
    text: '≤ 1,000 ms',
    holds: (r) => r.automation_withdraw_lag_p99_ms <= 1000,
  },
  {
    key: 'flood_stored_to_incident_p99_ms',
    label: "flood: its first flows stored to its incident opened, p99 under load",
    text: '≤ 2,000 ms',
    holds: (r) => r.flood_stored_to_incident_p99_ms <= 2000,
  },
  {
    key: 'flood_stored_to_rule_p99_ms',
    label: "flood: its first flows stored to the fingerprint's rule in BIRD, p99 under load",
    text: '≤ 3,000 ms',
    holds: (r) => r.flood_stored_to_rule_p99_ms <= 3000,
  },
  { key: 'query_1h_p99_ms', label: 'analyst queries p99, one hour', text: '≤ 300 ms', holds: (r) => r.query_1h_p99_ms <= 300 },
  { key: 'query_1d_p99_ms', label: 'analyst queries p99, one day', text: '≤ 2,000 ms', holds: (r) => r.query_1d_p99_ms <= 2000 },
  { key: 'top_1h_p99_ms', label: 'top talkers p99, last hour of 30 days', text: '≤ 100 ms', holds: (r) => r.top_1h_p99_ms <= 100 },
  { key: 'top_1d_p99_ms', label: 'top talkers p99, last day of 30 days', text: '≤ 300 ms', holds: (r) => r.top_1d_p99_ms <= 300 },
  { key: 'top_30d_p99_ms', label: 'top talkers p99, 30 days', text: '≤ 1,000 ms', holds: (r) => r.top_30d_p99_ms <= 1000 },
  // Issue 33: top-N by AS and by country within the top talkers' targets.
  { key: 'top_dims_1h_p99_ms', label: 'top-N by AS and by country p99, last hour of 30 days', text: '≤ 100 ms', holds: (r) => r.top_dims_1h_p99_ms <= 100 },
  { key: 'top_dims_1d_p99_ms', label: 'top-N by AS and by country p99, last day of 30 days', text: '≤ 300 ms', holds: (r) => r.top_dims_1d_p99_ms <= 300 },
  { key: 'top_dims_30d_p99_ms', label: 'top-N by AS and by country p99, 30 days', text: '≤ 1,000 ms', holds: (r) => r.top_dims_30d_p99_ms <= 1000 },
  { key: 'top_filtered_1h_p99_ms', label: 'filtered top-N p99, last hour of 30 days', text: '≤ 100 ms', holds: (r) => r.top_filtered_1h_p99_ms <= 100 },
  { key: 'top_filtered_1d_p99_ms', label: 'filtered top-N p99, last day of 30 days', text: '≤ 300 ms', holds: (r) => r.top_filtered_1d_p99_ms <= 300 },
  { key: 'top_filtered_30d_p99_ms', label: 'filtered top-N p99, 30 days', text: '≤ 1,000 ms', holds: (r) => r.top_filtered_30d_p99_ms <= 1000 },
  { key: 'top_sankey_1h_p99_ms', label: '3-dimension sankey p99, last hour of 30 days', text: '≤ 100 ms', holds: (r) => r.top_sankey_1h_p99_ms <= 100 },
  { key: 'top_sankey_1d_p99_ms', label: '3-dimension sankey p99, last day of 30 days', text: '≤ 300 ms', holds: (r) => r.top_sankey_1d_p99_ms <= 300 },
  { key: 'top_sankey_30d_p99_ms', label: '3-dimension sankey p99, 30 days', text: '≤ 1,000 ms', holds: (r) => r.top_sankey_30d_p99_ms <= 1000 },
  { key: 'replay_1m_s', label: 'replay of 1M flows', text: '≤ 10 s', holds: (r) => r.replay_1m_s <= 10 },
  { key: 'api_rss_mib', label: 'peak RSS, every role in one process (chDB in it)', text: '≤ 1,024 MiB', holds: (r) => r.api_rss_mib <= 1024 },
  { key: 'nats_rss_mib', label: 'nats-server peak RSS', text: '≤ 512 MiB', holds: (r) => r.nats_rss_mib <= 512 },
  {
    key: 'collector_flows_per_s',
    label: 'NetFlow v9/IPFIX collected and stored (2 cores, default stack)',
    text: '≥ 150,000 /s with loss < 0.1 %, and ≥ 0.5 × GoFlow2 alone',
    holds: (r) => r.collector_flows_per_s >= 150_000 && r.collector_loss_pct < 0.1 && r.collector_flows_per_s >= 0.5 * r.goflow2_alone_flows_per_s,
  },
  { key: 'collector_loss_pct', label: 'collector loss at that rate', text: '< 0.1 %', holds: (r) => r.collector_loss_pct < 0.1 },
];

const fmt = (n: number) => (Number.isFinite(n) ? (Math.abs(n) >= 100 ? Math.round(n).toLocaleString('en-US') : n.toFixed(2)) : String(n));

/** Where a full run's details go, relative to BENCHMARKS.md. */
const detailsName = 'bench/results/last-run.json';

/** Replaces the block between the bench markers of BENCHMARKS.md with this run's table, and writes its details beside the dated results. */
export function writeBenchmarks(file: string, result: BenchResult, extra: Record<string, unknown>): void {
  const m = machine();
  const rows = (Object.keys(result) as Array<keyof BenchResult>).map((k) => `| \`${k}\` | ${fmt(result[k])} |`);
  const checks = targets.map((t) => `| ${t.label} | ${t.text} | ${fmt(result[t.key])} | ${t.holds(result) ? 'holds' : '**missed**'} |`);
  const block = [
    '<!-- bench:start -->',
    `Last run: ${new Date().toISOString()} on ${m.cores} cores (${m.cpu}), ${m.memory_gib} GiB, Node ${m.node}.`,
    '',
    '| key | value |',
    '|---|---|',
    ...rows,
    '',
    '| target | wanted | measured | verdict |',
    '|---|---|---|---|',
    ...checks,
    '',
    'Ratios of this run: ' +
      `end to end / engine JSONEachRow = ${fmt(result.batched_e2e_flows_per_s / result.engine_jsoneachrow_rows_per_s)}, ` +
      `end to end / raw ClickHouse = ${fmt(result.batched_e2e_flows_per_s / result.raw_clickhouse_rows_per_s)}, ` +
      `raw ClickHouse / engine JSONEachRow = ${fmt(result.raw_clickhouse_rows_per_s / result.engine_jsoneachrow_rows_per_s)}, ` +
      `end to end / raw JetStream = ${fmt(result.batched_e2e_flows_per_s / result.raw_jetstream_events_per_s)}, ` +
      `single / bare http = ${fmt(result.single_ingest_rps / result.bare_http_rps)}, ` +
      `collector / GoFlow2 alone = ${fmt(result.collector_flows_per_s / result.goflow2_alone_flows_per_s)}; ` +
      `syncing / unsynced NATS: raw JetStream = ${fmt(result.synced_nats_raw_jetstream_events_per_s / result.unsynced_nats_raw_jetstream_events_per_s)}, ` +
      `batched accepted = ${fmt(result.synced_nats_accepted_flows_per_s / result.unsynced_nats_accepted_flows_per_s)}, ` +
      `one flow per request = ${fmt(result.synced_nats_single_ingest_rps / result.unsynced_nats_single_ingest_rps)}, ` +
      `one publish's acknowledgement = ${fmt(result.synced_nats_publish_ack_p50_ms)} ms and ${fmt(result.unsynced_nats_publish_ack_p50_ms)} ms.`,
    '',
    `Every detail of this run (each scenario's settings, latencies, memory, profiles): [${detailsName}](${detailsName}).`,
    '<!-- bench:end -->',
  ].join('\n');
  // The details are data, not reading: beside the dated results, not in the page.
  fs.writeFileSync(path.join(path.dirname(file), detailsName), `${JSON.stringify(extra, null, 2)}\n`);
  const text = fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : '# Benchmarks\n\n<!-- bench:start -->\n<!-- bench:end -->\n';
  const start = text.indexOf('<!-- bench:start -->');
  const end = text.indexOf('<!-- bench:end -->');
  const next = start >= 0 && end > start ? text.slice(0, start) + block + text.slice(end + '<!-- bench:end -->'.length) : `${text}\n${block}\n`;
  fs.writeFileSync(file, next);
}
