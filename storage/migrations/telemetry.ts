import { destinationRollups, flowsTable, rollupTable, rollupView } from './flow-tables';
import type { Migration } from './migration';

/**
 * Telemetry, incidents and rollups. Flows take the generation's types (see
 * storage/dialect.ts); signals, metric events and incidents keep epoch
 * milliseconds in Int64 and Strings on every generation. Legacy telemetry
 * tables are partitioned by day number (intDiv(ts, 86400000)) so that the
 * retention job drops whole partitions.
 */
const day = 'intDiv(ts, 86400000)';

export const telemetryMigrations: Migration[] = [
  {
    id: '0003_flows',
    // The generation's types (storage/dialect.ts); 0009 converts flows created by the legacy-only version.
    statements: (ctx) => [flowsTable(ctx), rollupTable(ctx, destinationRollups[0]!), rollupView(ctx, destinationRollups[0]!)],
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
