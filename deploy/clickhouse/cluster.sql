-- Generated from storage/migrations by storage/cluster-ddl.ts: do not edit by hand.
CREATE DATABASE IF NOT EXISTS nettel ON CLUSTER '{cluster}';

-- 0001_api_keys
CREATE TABLE IF NOT EXISTS nettel.api_keys ON CLUSTER '{cluster}' (
  key_id String,
  org_id String,
  key_hash String,
  name String,
  role String,
  created_at Int64,
  expires_at Int64,
  revoked_at Int64,
  created_by String,
  version UInt64
  ) ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/{shard}/nettel.api_keys', '{replica}', version) ORDER BY (org_id, key_id);

-- 0002_audit_log
CREATE TABLE IF NOT EXISTS nettel.audit_log ON CLUSTER '{cluster}' (
  org_id String,
  seq UInt64,
  at Int64,
  actor String,
  action String,
  target String,
  details String,
  prev_hash String,
  hash String
  ) ENGINE = ReplicatedMergeTree('/clickhouse/tables/{shard}/nettel.audit_log', '{replica}') ORDER BY (org_id, seq);

-- 0003_flows
CREATE TABLE IF NOT EXISTS nettel.flows ON CLUSTER '{cluster}' (
  org_id String, ts Int64, received_at Int64, event_id String,
  src_ip String, dst_ip String, src_port UInt16, dst_port UInt16, protocol String,
  bytes UInt64, packets UInt64
  ) ENGINE = ReplicatedMergeTree('/clickhouse/tables/{shard}/nettel.flows', '{replica}') PARTITION BY intDiv(ts, 86400000) ORDER BY (org_id, ts);

-- 0003_flows
CREATE TABLE IF NOT EXISTS nettel.flows_1m ON CLUSTER '{cluster}' (
  org_id String, minute Int64, dst_ip String, protocol String,
  bytes UInt64, packets UInt64, flows UInt64
  ) ENGINE = ReplicatedSummingMergeTree('/clickhouse/tables/{shard}/nettel.flows_1m', '{replica}', (bytes, packets, flows)) PARTITION BY intDiv(minute, 86400000)
  ORDER BY (org_id, minute, dst_ip, protocol);

-- 0003_flows
CREATE MATERIALIZED VIEW IF NOT EXISTS nettel.flows_1m_mv ON CLUSTER '{cluster}' TO nettel.flows_1m AS
  SELECT org_id, intDiv(ts, 60000) * 60000 AS minute, dst_ip, protocol,
  sum(bytes) AS bytes, sum(packets) AS packets, count() AS flows
  FROM nettel.flows GROUP BY org_id, minute, dst_ip, protocol;

-- 0004_signals
CREATE TABLE IF NOT EXISTS nettel.signals ON CLUSTER '{cluster}' (
  org_id String, service String, environment String, region String, ts Int64, received_at Int64,
  event_id String, telemetry String, asn UInt32, src_ip String, dst_ip String, dst_port UInt16,
  bytes UInt64, latency_ms UInt32, rule String
  ) ENGINE = ReplicatedMergeTree('/clickhouse/tables/{shard}/nettel.signals', '{replica}') PARTITION BY intDiv(ts, 86400000) ORDER BY (org_id, service, environment, region, ts);

-- 0005_metrics
CREATE TABLE IF NOT EXISTS nettel.metrics ON CLUSTER '{cluster}' (
  org_id String, service String, environment String, region String, metric String,
  ts Int64, received_at Int64, event_id String, value Float64
  ) ENGINE = ReplicatedMergeTree('/clickhouse/tables/{shard}/nettel.metrics', '{replica}') PARTITION BY intDiv(ts, 86400000) ORDER BY (org_id, service, metric, ts);

-- 0005_metrics
CREATE TABLE IF NOT EXISTS nettel.metrics_1m ON CLUSTER '{cluster}' (
  org_id String, service String, metric String, minute Int64, total Float64, samples UInt64
  ) ENGINE = ReplicatedSummingMergeTree('/clickhouse/tables/{shard}/nettel.metrics_1m', '{replica}', (total, samples)) PARTITION BY intDiv(minute, 86400000)
  ORDER BY (org_id, service, metric, minute);

-- 0005_metrics
CREATE MATERIALIZED VIEW IF NOT EXISTS nettel.metrics_1m_mv ON CLUSTER '{cluster}' TO nettel.metrics_1m AS
  SELECT org_id, service, metric, intDiv(ts, 60000) * 60000 AS minute, sum(value) AS total, count() AS samples
  FROM nettel.metrics GROUP BY org_id, service, metric, minute;

-- 0006_incidents
CREATE TABLE IF NOT EXISTS nettel.incidents ON CLUSTER '{cluster}' (
  org_id String, id String, service String, environment String, region String,
  severity String, state String, source String, rule String, escalations String,
  first_seen Int64, last_seen Int64, signal_count UInt64, kinds String,
  max_latency_ms UInt32, total_bytes UInt64, version UInt64, updated_at Int64, superseded UInt8
  ) ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/{shard}/nettel.incidents', '{replica}', version) ORDER BY (org_id, id);

-- 0006_incidents
CREATE TABLE IF NOT EXISTS nettel.incident_transitions ON CLUSTER '{cluster}' (
  org_id String, service String, environment String, region String,
  incident_id String, state String, at Int64, through_ts Int64, actor String
  ) ENGINE = ReplicatedMergeTree('/clickhouse/tables/{shard}/nettel.incident_transitions', '{replica}') ORDER BY (org_id, service, environment, region, at);

-- 0007_policies
CREATE TABLE IF NOT EXISTS nettel.policies ON CLUSTER '{cluster}' (
  org_id String, id String, name String, requires_approval UInt8, allow_execution UInt8,
  environments String, severities String, max_window_minutes UInt32, approval_timeout_minutes Float64,
  status String, created_at Int64, updated_at Int64, version UInt64
  ) ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/{shard}/nettel.policies', '{replica}', version) ORDER BY (org_id, id);

-- 0008_replays
CREATE TABLE IF NOT EXISTS nettel.replays ON CLUSTER '{cluster}' (
  org_id String, replay_id String, incident_id String, status String, requested_by String,
  requested_at Int64, updated_at Int64, window_minutes UInt32, approvals String, report String, error String,
  version UInt64
  ) ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/{shard}/nettel.replays', '{replica}', version) ORDER BY (org_id, replay_id);
