import type { Migration } from './migration';

/**
 * Telemetry, incidents and rollups. Times are epoch milliseconds in Int64 and
 * addresses are Strings: ClickHouse 18.16 has neither DateTime64 nor IPv6.
 * Telemetry tables are partitioned by day number (intDiv(ts, 86400000)) so
 * that retention drops whole partitions on every ClickHouse generation.
 */
const day = 'intDiv(ts, 86400000)';

export const telemetryMigrations: Migration[] = [
  {
    id: '0003_flows',
    statements: ({ db }) => [
      `CREATE TABLE IF NOT EXISTS ${db}.flows (
        org_id String, ts Int64, received_at Int64, event_id String,
        src_ip String, dst_ip String, src_port UInt16, dst_port UInt16, protocol String,
        bytes UInt64, packets UInt64
      ) ENGINE = MergeTree PARTITION BY ${day} ORDER BY (org_id, ts)`,
      // Keyed by destination and protocol, not by source: a source × destination rollup is
      // nearly as large as the flows and halved insert throughput; top sources read the flows.
      `CREATE TABLE IF NOT EXISTS ${db}.flows_1m (
        org_id String, minute Int64, dst_ip String, protocol String,
        bytes UInt64, packets UInt64, flows UInt64
      ) ENGINE = SummingMergeTree((bytes, packets, flows)) PARTITION BY intDiv(minute, 86400000)
        ORDER BY (org_id, minute, dst_ip, protocol)`,
      `CREATE MATERIALIZED VIEW IF NOT EXISTS ${db}.flows_1m_mv TO ${db}.flows_1m AS
        SELECT org_id, intDiv(ts, 60000) * 60000 AS minute, dst_ip, protocol,
               sum(bytes) AS bytes, sum(packets) AS packets, count() AS flows
        FROM ${db}.flows GROUP BY org_id, minute, dst_ip, protocol`,
    ],
  },
  {
    id: '0004_signals',
    statements: ({ db }) => [
      `CREATE TABLE IF NOT EXISTS ${db}.signals (
        org_id String, service String, environment String, region String, ts Int64, received_at Int64,
        event_id String, telemetry String, asn UInt32, src_ip String, dst_ip String, dst_port UInt16,
        bytes UInt64, latency_ms UInt32, rule String
      ) ENGINE = MergeTree PARTITION BY ${day} ORDER BY (org_id, service, environment, region, ts)`,
    ],
  },
  {
    id: '0005_metrics',
    statements: ({ db }) => [
      `CREATE TABLE IF NOT EXISTS ${db}.metrics (
        org_id String, service String, environment String, region String, metric String,
        ts Int64, received_at Int64, event_id String, value Float64
      ) ENGINE = MergeTree PARTITION BY ${day} ORDER BY (org_id, service, metric, ts)`,
      `CREATE TABLE IF NOT EXISTS ${db}.metrics_1m (
        org_id String, service String, metric String, minute Int64, total Float64, samples UInt64
      ) ENGINE = SummingMergeTree((total, samples)) PARTITION BY intDiv(minute, 86400000)
        ORDER BY (org_id, service, metric, minute)`,
      `CREATE MATERIALIZED VIEW IF NOT EXISTS ${db}.metrics_1m_mv TO ${db}.metrics_1m AS
        SELECT org_id, service, metric, intDiv(ts, 60000) * 60000 AS minute, sum(value) AS total, count() AS samples
        FROM ${db}.metrics GROUP BY org_id, service, metric, minute`,
    ],
  },
  {
    id: '0006_incidents',
    statements: ({ db }) => [
      // One row per computation of an incident; the highest version wins.
      `CREATE TABLE IF NOT EXISTS ${db}.incidents (
        org_id String, id String, service String, environment String, region String,
        severity String, state String, source String, rule String, escalations String,
        first_seen Int64, last_seen Int64, signal_count UInt64, kinds String,
        max_latency_ms UInt32, total_bytes UInt64, version UInt64, updated_at Int64, superseded UInt8
      ) ENGINE = ReplacingMergeTree(version) ORDER BY (org_id, id)`,
      // A transition applies by key and time (through_ts), so it follows an incident whose id moves.
      `CREATE TABLE IF NOT EXISTS ${db}.incident_transitions (
        org_id String, service String, environment String, region String,
        incident_id String, state String, at Int64, through_ts Int64, actor String
      ) ENGINE = MergeTree ORDER BY (org_id, service, environment, region, at)`,
    ],
  },
];
