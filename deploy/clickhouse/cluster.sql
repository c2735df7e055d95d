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
  org_id LowCardinality(String), ts DateTime64(3) CODEC(Delta, ZSTD(1)), received_at DateTime64(3) CODEC(ZSTD(1)), event_id String CODEC(ZSTD(1)),
  src_ip IPv6 CODEC(ZSTD(3)), dst_ip IPv6 CODEC(ZSTD(3)), src_port UInt16 CODEC(ZSTD(1)), dst_port UInt16 CODEC(ZSTD(1)), protocol LowCardinality(String),
  bytes UInt64 CODEC(T64, ZSTD(1)), packets UInt64 CODEC(T64, ZSTD(1))
  , INDEX event_id_bloom event_id TYPE bloom_filter(0.05) GRANULARITY 4
  ) ENGINE = ReplicatedMergeTree('/clickhouse/tables/{shard}/nettel.flows', '{replica}') PARTITION BY toDate(ts) ORDER BY (org_id, ts) TTL toDateTime(ts) + INTERVAL 30 DAY;

-- 0003_flows
CREATE TABLE IF NOT EXISTS nettel.flows_1m ON CLUSTER '{cluster}' (
  org_id LowCardinality(String), minute DateTime CODEC(DoubleDelta, ZSTD(1)), dst_ip IPv6, protocol LowCardinality(String),
  bytes UInt64 CODEC(T64, ZSTD(1)), packets UInt64 CODEC(T64, ZSTD(1)), flows UInt64 CODEC(T64, ZSTD(1))
  ) ENGINE = ReplicatedSummingMergeTree('/clickhouse/tables/{shard}/nettel.flows_1m', '{replica}', (bytes, packets, flows)) PARTITION BY toDate(minute)
  ORDER BY (org_id, minute, dst_ip, protocol) TTL toDateTime(minute) + INTERVAL 30 DAY;

-- 0003_flows
CREATE MATERIALIZED VIEW IF NOT EXISTS nettel.flows_1m_mv ON CLUSTER '{cluster}' TO nettel.flows_1m AS
  SELECT org_id, toDateTime(toStartOfInterval(ts, INTERVAL 60 SECOND)) AS minute, dst_ip, protocol, sum(bytes) AS bytes, sum(packets) AS packets, count() AS flows
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

-- 0010_long_range_rollups
CREATE TABLE IF NOT EXISTS nettel.flows_5m ON CLUSTER '{cluster}' (
  org_id LowCardinality(String), minute DateTime CODEC(DoubleDelta, ZSTD(1)), dst_ip IPv6, protocol LowCardinality(String),
  bytes UInt64 CODEC(T64, ZSTD(1)), packets UInt64 CODEC(T64, ZSTD(1)), flows UInt64 CODEC(T64, ZSTD(1))
  ) ENGINE = ReplicatedSummingMergeTree('/clickhouse/tables/{shard}/nettel.flows_5m', '{replica}', (bytes, packets, flows)) PARTITION BY toDate(minute)
  ORDER BY (org_id, minute, dst_ip, protocol) TTL toDateTime(minute) + INTERVAL 90 DAY;

-- 0010_long_range_rollups
CREATE TABLE IF NOT EXISTS nettel.flows_1h ON CLUSTER '{cluster}' (
  org_id LowCardinality(String), minute DateTime CODEC(DoubleDelta, ZSTD(1)), dst_ip IPv6, protocol LowCardinality(String),
  bytes UInt64 CODEC(T64, ZSTD(1)), packets UInt64 CODEC(T64, ZSTD(1)), flows UInt64 CODEC(T64, ZSTD(1))
  ) ENGINE = ReplicatedSummingMergeTree('/clickhouse/tables/{shard}/nettel.flows_1h', '{replica}', (bytes, packets, flows)) PARTITION BY toDate(minute)
  ORDER BY (org_id, minute, dst_ip, protocol) TTL toDateTime(minute) + INTERVAL 400 DAY;

-- 0010_long_range_rollups
CREATE TABLE IF NOT EXISTS nettel.flows_src_1m ON CLUSTER '{cluster}' (
  org_id LowCardinality(String), minute DateTime CODEC(DoubleDelta, ZSTD(1)), src_ip IPv6,
  bytes UInt64 CODEC(T64, ZSTD(1)), packets UInt64 CODEC(T64, ZSTD(1)), flows UInt64 CODEC(T64, ZSTD(1))
  ) ENGINE = ReplicatedSummingMergeTree('/clickhouse/tables/{shard}/nettel.flows_src_1m', '{replica}', (bytes, packets, flows)) PARTITION BY toDate(minute)
  ORDER BY (org_id, minute, src_ip) TTL toDateTime(minute) + INTERVAL 30 DAY;

-- 0010_long_range_rollups
CREATE TABLE IF NOT EXISTS nettel.flows_src_5m ON CLUSTER '{cluster}' (
  org_id LowCardinality(String), minute DateTime CODEC(DoubleDelta, ZSTD(1)), src_ip IPv6,
  bytes UInt64 CODEC(T64, ZSTD(1)), packets UInt64 CODEC(T64, ZSTD(1)), flows UInt64 CODEC(T64, ZSTD(1))
  ) ENGINE = ReplicatedSummingMergeTree('/clickhouse/tables/{shard}/nettel.flows_src_5m', '{replica}', (bytes, packets, flows)) PARTITION BY toDate(minute)
  ORDER BY (org_id, minute, src_ip) TTL toDateTime(minute) + INTERVAL 90 DAY;

-- 0010_long_range_rollups
CREATE TABLE IF NOT EXISTS nettel.flows_src_1h ON CLUSTER '{cluster}' (
  org_id LowCardinality(String), minute DateTime CODEC(DoubleDelta, ZSTD(1)), src_ip IPv6,
  bytes UInt64 CODEC(T64, ZSTD(1)), packets UInt64 CODEC(T64, ZSTD(1)), flows UInt64 CODEC(T64, ZSTD(1))
  ) ENGINE = ReplicatedSummingMergeTree('/clickhouse/tables/{shard}/nettel.flows_src_1h', '{replica}', (bytes, packets, flows)) PARTITION BY toDate(minute)
  ORDER BY (org_id, minute, src_ip) TTL toDateTime(minute) + INTERVAL 400 DAY;

-- 0010_long_range_rollups
CREATE TABLE IF NOT EXISTS nettel.metrics_5m ON CLUSTER '{cluster}' (
  org_id String, service String, metric String, minute Int64, total Float64, samples UInt64
  ) ENGINE = ReplicatedSummingMergeTree('/clickhouse/tables/{shard}/nettel.metrics_5m', '{replica}', (total, samples)) PARTITION BY intDiv(minute, 86400000)
  ORDER BY (org_id, service, metric, minute);

-- 0010_long_range_rollups
CREATE TABLE IF NOT EXISTS nettel.metrics_1h ON CLUSTER '{cluster}' (
  org_id String, service String, metric String, minute Int64, total Float64, samples UInt64
  ) ENGINE = ReplicatedSummingMergeTree('/clickhouse/tables/{shard}/nettel.metrics_1h', '{replica}', (total, samples)) PARTITION BY intDiv(minute, 86400000)
  ORDER BY (org_id, service, metric, minute);

-- 0010_long_range_rollups
CREATE MATERIALIZED VIEW IF NOT EXISTS nettel.flows_5m_mv ON CLUSTER '{cluster}' TO nettel.flows_5m AS
  SELECT org_id, bucket AS minute, dst_ip, protocol, bytes, packets, flows FROM (
  SELECT org_id, toDateTime(toStartOfInterval(minute, INTERVAL 300 SECOND)) AS bucket, dst_ip, protocol, sum(bytes) AS bytes, sum(packets) AS packets, sum(flows) AS flows
  FROM nettel.flows_1m GROUP BY org_id, bucket, dst_ip, protocol);

-- 0010_long_range_rollups
CREATE MATERIALIZED VIEW IF NOT EXISTS nettel.flows_1h_mv ON CLUSTER '{cluster}' TO nettel.flows_1h AS
  SELECT org_id, bucket AS minute, dst_ip, protocol, bytes, packets, flows FROM (
  SELECT org_id, toDateTime(toStartOfInterval(minute, INTERVAL 3600 SECOND)) AS bucket, dst_ip, protocol, sum(bytes) AS bytes, sum(packets) AS packets, sum(flows) AS flows
  FROM nettel.flows_5m GROUP BY org_id, bucket, dst_ip, protocol);

-- 0010_long_range_rollups
CREATE MATERIALIZED VIEW IF NOT EXISTS nettel.flows_src_1m_mv ON CLUSTER '{cluster}' TO nettel.flows_src_1m AS
  SELECT org_id, toDateTime(toStartOfInterval(ts, INTERVAL 60 SECOND)) AS minute, src_ip, sum(bytes) AS bytes, sum(packets) AS packets, count() AS flows
  FROM nettel.flows GROUP BY org_id, minute, src_ip;

-- 0010_long_range_rollups
CREATE MATERIALIZED VIEW IF NOT EXISTS nettel.flows_src_5m_mv ON CLUSTER '{cluster}' TO nettel.flows_src_5m AS
  SELECT org_id, bucket AS minute, src_ip, bytes, packets, flows FROM (
  SELECT org_id, toDateTime(toStartOfInterval(minute, INTERVAL 300 SECOND)) AS bucket, src_ip, sum(bytes) AS bytes, sum(packets) AS packets, sum(flows) AS flows
  FROM nettel.flows_src_1m GROUP BY org_id, bucket, src_ip);

-- 0010_long_range_rollups
CREATE MATERIALIZED VIEW IF NOT EXISTS nettel.flows_src_1h_mv ON CLUSTER '{cluster}' TO nettel.flows_src_1h AS
  SELECT org_id, bucket AS minute, src_ip, bytes, packets, flows FROM (
  SELECT org_id, toDateTime(toStartOfInterval(minute, INTERVAL 3600 SECOND)) AS bucket, src_ip, sum(bytes) AS bytes, sum(packets) AS packets, sum(flows) AS flows
  FROM nettel.flows_src_5m GROUP BY org_id, bucket, src_ip);

-- 0010_long_range_rollups
CREATE MATERIALIZED VIEW IF NOT EXISTS nettel.metrics_5m_mv ON CLUSTER '{cluster}' TO nettel.metrics_5m AS SELECT org_id, service, metric, bucket AS minute, total, samples FROM (
  SELECT org_id, service, metric, intDiv(minute, 300000) * 300000 AS bucket, sum(total) AS total, sum(samples) AS samples
  FROM nettel.metrics_1m GROUP BY org_id, service, metric, bucket);

-- 0010_long_range_rollups
CREATE MATERIALIZED VIEW IF NOT EXISTS nettel.metrics_1h_mv ON CLUSTER '{cluster}' TO nettel.metrics_1h AS SELECT org_id, service, metric, bucket AS minute, total, samples FROM (
  SELECT org_id, service, metric, intDiv(minute, 3600000) * 3600000 AS bucket, sum(total) AS total, sum(samples) AS samples
  FROM nettel.metrics_5m GROUP BY org_id, service, metric, bucket);

-- 0011_retention_by_ttl
ALTER TABLE nettel.signals ON CLUSTER '{cluster}' MODIFY TTL toDateTime(intDiv(ts, 1000)) + INTERVAL 30 DAY;

-- 0011_retention_by_ttl
ALTER TABLE nettel.metrics ON CLUSTER '{cluster}' MODIFY TTL toDateTime(intDiv(ts, 1000)) + INTERVAL 30 DAY;

-- 0011_retention_by_ttl
ALTER TABLE nettel.metrics_1m ON CLUSTER '{cluster}' MODIFY TTL toDateTime(intDiv(minute, 1000)) + INTERVAL 30 DAY;

-- 0011_retention_by_ttl
ALTER TABLE nettel.metrics_5m ON CLUSTER '{cluster}' MODIFY TTL toDateTime(intDiv(minute, 1000)) + INTERVAL 90 DAY;

-- 0011_retention_by_ttl
ALTER TABLE nettel.metrics_1h ON CLUSTER '{cluster}' MODIFY TTL toDateTime(intDiv(minute, 1000)) + INTERVAL 400 DAY;

-- 0012_exporters
CREATE TABLE IF NOT EXISTS nettel.exporters ON CLUSTER '{cluster}' (
  org_id String, id String, address String, name String, sampling_rate UInt32,
  status String, created_at Int64, updated_at Int64, version UInt64
  ) ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/{shard}/nettel.exporters', '{replica}', version) ORDER BY (org_id, id);

-- 0012_exporters
CREATE TABLE IF NOT EXISTS nettel.unknown_exporters ON CLUSTER '{cluster}' (
  address String, minute Int64, datagrams UInt64, flows UInt64
  ) ENGINE = ReplicatedSummingMergeTree('/clickhouse/tables/{shard}/nettel.unknown_exporters', '{replica}', (datagrams, flows)) ORDER BY (address, minute);

-- 0013_flow_exporter_fields
ALTER TABLE nettel.flows ON CLUSTER '{cluster}' ADD COLUMN IF NOT EXISTS exporter IPv6 CODEC(ZSTD(3));

-- 0013_flow_exporter_fields
ALTER TABLE nettel.flows ON CLUSTER '{cluster}' ADD COLUMN IF NOT EXISTS in_if UInt32 CODEC(ZSTD(1));

-- 0013_flow_exporter_fields
ALTER TABLE nettel.flows ON CLUSTER '{cluster}' ADD COLUMN IF NOT EXISTS out_if UInt32 CODEC(ZSTD(1));

-- 0013_flow_exporter_fields
ALTER TABLE nettel.flows ON CLUSTER '{cluster}' ADD COLUMN IF NOT EXISTS src_as UInt32 CODEC(ZSTD(1));

-- 0013_flow_exporter_fields
ALTER TABLE nettel.flows ON CLUSTER '{cluster}' ADD COLUMN IF NOT EXISTS dst_as UInt32 CODEC(ZSTD(1));

-- 0013_flow_exporter_fields
ALTER TABLE nettel.flows ON CLUSTER '{cluster}' ADD COLUMN IF NOT EXISTS tcp_flags UInt16 CODEC(ZSTD(1));

-- 0013_flow_exporter_fields
ALTER TABLE nettel.flows ON CLUSTER '{cluster}' ADD COLUMN IF NOT EXISTS tos UInt8 CODEC(ZSTD(1));

-- 0013_flow_exporter_fields
ALTER TABLE nettel.flows ON CLUSTER '{cluster}' ADD COLUMN IF NOT EXISTS flow_start DateTime64(3) CODEC(Delta, ZSTD(1));

-- 0013_flow_exporter_fields
ALTER TABLE nettel.flows ON CLUSTER '{cluster}' ADD COLUMN IF NOT EXISTS flow_end DateTime64(3) CODEC(Delta, ZSTD(1));

-- 0013_flow_exporter_fields
ALTER TABLE nettel.flows ON CLUSTER '{cluster}' ADD COLUMN IF NOT EXISTS sampling_rate UInt32 CODEC(ZSTD(1));

-- 0014_detection_rules
CREATE TABLE IF NOT EXISTS nettel.detection_rules ON CLUSTER '{cluster}' (
  org_id String, version UInt64, rules String, created_at Int64, actor String
  ) ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/{shard}/nettel.detection_rules', '{replica}') ORDER BY (org_id, version);

-- 0014_detection_rules
ALTER TABLE nettel.incidents ON CLUSTER '{cluster}' ADD COLUMN IF NOT EXISTS rules_version UInt64 DEFAULT 0;

-- 0015_webhooks
CREATE TABLE IF NOT EXISTS nettel.webhooks ON CLUSTER '{cluster}' (
  org_id String, id String, url String, events String, description String, secret String,
  status String, created_at Int64, updated_at Int64, failing_since Int64, version UInt64
  ) ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/{shard}/nettel.webhooks', '{replica}', version) ORDER BY (org_id, id);

-- 0015_webhooks
CREATE TABLE IF NOT EXISTS nettel.webhook_deliveries ON CLUSTER '{cluster}' (
  org_id String, webhook_id String, event_id String, event_type String, status String, attempts UInt32,
  response_code UInt16, latency_ms UInt32, error String, first_attempt_at Int64, last_attempt_at Int64,
  next_attempt_at Int64
  ) ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/{shard}/nettel.webhook_deliveries', '{replica}', attempts) ORDER BY (org_id, webhook_id, event_id);

-- 0016_replay_approval_gate
ALTER TABLE nettel.replays ON CLUSTER '{cluster}' ADD COLUMN IF NOT EXISTS decision_deadline Int64 DEFAULT 0;

-- 0016_replay_approval_gate
ALTER TABLE nettel.replays ON CLUSTER '{cluster}' ADD COLUMN IF NOT EXISTS approval_policies String DEFAULT '[]';

-- 0017_rollup_receipts
DROP VIEW IF EXISTS nettel.flows_1m_mv ON CLUSTER '{cluster}';

-- 0017_rollup_receipts
DROP VIEW IF EXISTS nettel.flows_5m_mv ON CLUSTER '{cluster}';

-- 0017_rollup_receipts
DROP VIEW IF EXISTS nettel.flows_1h_mv ON CLUSTER '{cluster}';

-- 0017_rollup_receipts
DROP VIEW IF EXISTS nettel.flows_src_1m_mv ON CLUSTER '{cluster}';

-- 0017_rollup_receipts
DROP VIEW IF EXISTS nettel.flows_src_5m_mv ON CLUSTER '{cluster}';

-- 0017_rollup_receipts
DROP VIEW IF EXISTS nettel.flows_src_1h_mv ON CLUSTER '{cluster}';

-- 0017_rollup_receipts
ALTER TABLE nettel.flows ON CLUSTER '{cluster}' ADD COLUMN IF NOT EXISTS write_id UInt64 CODEC(ZSTD(1));

-- 0017_rollup_receipts
ALTER TABLE nettel.flows ON CLUSTER '{cluster}' ADD INDEX IF NOT EXISTS write_id_minmax write_id TYPE minmax GRANULARITY 1;

-- 0017_rollup_receipts
ALTER TABLE nettel.flows_1m ON CLUSTER '{cluster}' ADD COLUMN IF NOT EXISTS write_id UInt64 CODEC(ZSTD(1)), MODIFY ORDER BY (org_id, minute, dst_ip, protocol, write_id);

-- 0017_rollup_receipts
ALTER TABLE nettel.flows_5m ON CLUSTER '{cluster}' ADD COLUMN IF NOT EXISTS write_id UInt64 CODEC(ZSTD(1)), MODIFY ORDER BY (org_id, minute, dst_ip, protocol, write_id);

-- 0017_rollup_receipts
ALTER TABLE nettel.flows_1h ON CLUSTER '{cluster}' ADD COLUMN IF NOT EXISTS write_id UInt64 CODEC(ZSTD(1)), MODIFY ORDER BY (org_id, minute, dst_ip, protocol, write_id);

-- 0017_rollup_receipts
ALTER TABLE nettel.flows_src_1m ON CLUSTER '{cluster}' ADD COLUMN IF NOT EXISTS write_id UInt64 CODEC(ZSTD(1)), MODIFY ORDER BY (org_id, minute, src_ip, write_id);

-- 0017_rollup_receipts
ALTER TABLE nettel.flows_src_5m ON CLUSTER '{cluster}' ADD COLUMN IF NOT EXISTS write_id UInt64 CODEC(ZSTD(1)), MODIFY ORDER BY (org_id, minute, src_ip, write_id);

-- 0017_rollup_receipts
ALTER TABLE nettel.flows_src_1h ON CLUSTER '{cluster}' ADD COLUMN IF NOT EXISTS write_id UInt64 CODEC(ZSTD(1)), MODIFY ORDER BY (org_id, minute, src_ip, write_id);

-- 0017_rollup_receipts
CREATE MATERIALIZED VIEW IF NOT EXISTS nettel.flows_1m_mv ON CLUSTER '{cluster}' TO nettel.flows_1m AS
  SELECT org_id, if(write_id = 0, bucket, toDateTime(toStartOfInterval(now(), INTERVAL 60 SECOND))) AS minute, dst_ip, protocol, write_id, bytes, packets, flows FROM (
  SELECT org_id, toDateTime(toStartOfInterval(ts, INTERVAL 60 SECOND)) AS bucket, dst_ip, protocol, write_id, sum(bytes) AS bytes, sum(packets) AS packets, count() AS flows
  FROM nettel.flows GROUP BY GROUPING SETS ((org_id, bucket, dst_ip, protocol), (write_id)) HAVING write_id != 0 OR org_id != '');

-- 0017_rollup_receipts
CREATE MATERIALIZED VIEW IF NOT EXISTS nettel.flows_5m_mv ON CLUSTER '{cluster}' TO nettel.flows_5m AS
  SELECT org_id, bucket AS minute, dst_ip, protocol, write_id, bytes, packets, flows FROM (
  SELECT org_id, toDateTime(toStartOfInterval(minute, INTERVAL 300 SECOND)) AS bucket, dst_ip, protocol, write_id, sum(bytes) AS bytes, sum(packets) AS packets, sum(flows) AS flows
  FROM nettel.flows_1m GROUP BY org_id, bucket, dst_ip, protocol, write_id);

-- 0017_rollup_receipts
CREATE MATERIALIZED VIEW IF NOT EXISTS nettel.flows_1h_mv ON CLUSTER '{cluster}' TO nettel.flows_1h AS
  SELECT org_id, bucket AS minute, dst_ip, protocol, write_id, bytes, packets, flows FROM (
  SELECT org_id, toDateTime(toStartOfInterval(minute, INTERVAL 3600 SECOND)) AS bucket, dst_ip, protocol, write_id, sum(bytes) AS bytes, sum(packets) AS packets, sum(flows) AS flows
  FROM nettel.flows_5m GROUP BY org_id, bucket, dst_ip, protocol, write_id);

-- 0017_rollup_receipts
CREATE MATERIALIZED VIEW IF NOT EXISTS nettel.flows_src_1m_mv ON CLUSTER '{cluster}' TO nettel.flows_src_1m AS
  SELECT org_id, if(write_id = 0, bucket, toDateTime(toStartOfInterval(now(), INTERVAL 60 SECOND))) AS minute, src_ip, write_id, bytes, packets, flows FROM (
  SELECT org_id, toDateTime(toStartOfInterval(ts, INTERVAL 60 SECOND)) AS bucket, src_ip, write_id, sum(bytes) AS bytes, sum(packets) AS packets, count() AS flows
  FROM nettel.flows GROUP BY GROUPING SETS ((org_id, bucket, src_ip), (write_id)) HAVING write_id != 0 OR org_id != '');

-- 0017_rollup_receipts
CREATE MATERIALIZED VIEW IF NOT EXISTS nettel.flows_src_5m_mv ON CLUSTER '{cluster}' TO nettel.flows_src_5m AS
  SELECT org_id, bucket AS minute, src_ip, write_id, bytes, packets, flows FROM (
  SELECT org_id, toDateTime(toStartOfInterval(minute, INTERVAL 300 SECOND)) AS bucket, src_ip, write_id, sum(bytes) AS bytes, sum(packets) AS packets, sum(flows) AS flows
  FROM nettel.flows_src_1m GROUP BY org_id, bucket, src_ip, write_id);

-- 0017_rollup_receipts
CREATE MATERIALIZED VIEW IF NOT EXISTS nettel.flows_src_1h_mv ON CLUSTER '{cluster}' TO nettel.flows_src_1h AS
  SELECT org_id, bucket AS minute, src_ip, write_id, bytes, packets, flows FROM (
  SELECT org_id, toDateTime(toStartOfInterval(minute, INTERVAL 3600 SECOND)) AS bucket, src_ip, write_id, sum(bytes) AS bytes, sum(packets) AS packets, sum(flows) AS flows
  FROM nettel.flows_src_5m GROUP BY org_id, bucket, src_ip, write_id);

-- 0018_workspace_prefixes
CREATE TABLE IF NOT EXISTS nettel.workspace_prefixes ON CLUSTER '{cluster}' (
  org_id String, id String, prefix String, range_first String, range_last String, description String,
  status String, created_at Int64, created_by String, updated_at Int64, version UInt64
  ) ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/{shard}/nettel.workspace_prefixes', '{replica}', version) ORDER BY (org_id, id);

-- 0019_policy_mitigation_bounds
ALTER TABLE nettel.policies ON CLUSTER '{cluster}' ADD COLUMN IF NOT EXISTS allowed_actions String DEFAULT '[]';

-- 0019_policy_mitigation_bounds
ALTER TABLE nettel.policies ON CLUSTER '{cluster}' ADD COLUMN IF NOT EXISTS max_duration_minutes UInt32 DEFAULT 0;

-- 0019_policy_mitigation_bounds
ALTER TABLE nettel.policies ON CLUSTER '{cluster}' ADD COLUMN IF NOT EXISTS max_active_mitigations UInt32 DEFAULT 0;

-- 0019_policy_mitigation_bounds
ALTER TABLE nettel.policies ON CLUSTER '{cluster}' ADD COLUMN IF NOT EXISTS min_prefix_length_v4 UInt8 DEFAULT 0;

-- 0019_policy_mitigation_bounds
ALTER TABLE nettel.policies ON CLUSTER '{cluster}' ADD COLUMN IF NOT EXISTS min_prefix_length_v6 UInt8 DEFAULT 0;

-- 0020_playbooks
CREATE TABLE IF NOT EXISTS nettel.playbooks ON CLUSTER '{cluster}' (
  org_id String, version UInt64, playbooks String, created_at Int64, actor String
  ) ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/{shard}/nettel.playbooks', '{replica}') ORDER BY (org_id, version);

-- 0021_automations
CREATE TABLE IF NOT EXISTS nettel.automations ON CLUSTER '{cluster}' (
  org_id String, automation_id String, incident_id String, playbook_id String, playbook_version UInt64,
  status String, requested_by String, requested_at Int64, updated_at Int64, approvals String, actions String,
  error String, decision_deadline Int64, approval_policies String, version UInt64
  ) ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/{shard}/nettel.automations', '{replica}', version) ORDER BY (org_id, automation_id);

-- 0022_key_owners
ALTER TABLE nettel.api_keys ON CLUSTER '{cluster}' ADD COLUMN IF NOT EXISTS owner_subject String DEFAULT '';

-- 0022_key_owners
ALTER TABLE nettel.api_keys ON CLUSTER '{cluster}' ADD COLUMN IF NOT EXISTS owner_name String DEFAULT '';

-- 0022_key_owners
ALTER TABLE nettel.api_keys ON CLUSTER '{cluster}' ADD COLUMN IF NOT EXISTS owner_email String DEFAULT '';

-- 0023_replay_requester_person
ALTER TABLE nettel.replays ON CLUSTER '{cluster}' ADD COLUMN IF NOT EXISTS requested_by_person String DEFAULT '';

-- 0024_automation_requester_person
ALTER TABLE nettel.automations ON CLUSTER '{cluster}' ADD COLUMN IF NOT EXISTS requested_by_person String DEFAULT '';

-- 0025_playbook_author_person
ALTER TABLE nettel.playbooks ON CLUSTER '{cluster}' ADD COLUMN IF NOT EXISTS actor_person String DEFAULT '';

-- 0026_single_sign_on
CREATE TABLE IF NOT EXISTS nettel.sso_group_mappings ON CLUSTER '{cluster}' (
  org_id String, version UInt64, mappings String, created_at Int64, actor String
  ) ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/{shard}/nettel.sso_group_mappings', '{replica}') ORDER BY (org_id, version);

-- 0026_single_sign_on
CREATE TABLE IF NOT EXISTS nettel.sso_requirements ON CLUSTER '{cluster}' (
  org_id String, required UInt8, version UInt64, updated_at Int64, actor String
  ) ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/{shard}/nettel.sso_requirements', '{replica}', version) ORDER BY org_id;

-- 0027_sso_person_keys_from_sign_in
ALTER TABLE nettel.sso_requirements ON CLUSTER '{cluster}' ADD COLUMN IF NOT EXISTS person_keys_from_sign_in UInt8 DEFAULT 0;

-- 0028_guardrails
CREATE TABLE IF NOT EXISTS nettel.guardrail_settings ON CLUSTER '{cluster}' (
  org_id String, four_eyes UInt8, version UInt64, updated_at Int64, actor String
  ) ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/{shard}/nettel.guardrail_settings', '{replica}', version) ORDER BY org_id;

-- 0028_guardrails
CREATE TABLE IF NOT EXISTS nettel.guardrail_changes ON CLUSTER '{cluster}' (
  org_id String, change_id String, kind String, target String, change String, reasons String,
  requested_by String, requested_by_person String, requested_at Int64,
  status String, decided_by String, decided_by_person String, decided_at Int64, version UInt64
  ) ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/{shard}/nettel.guardrail_changes', '{replica}', version) ORDER BY (org_id, change_id);

-- 0040_flow_enrichment
ALTER TABLE nettel.flows ON CLUSTER '{cluster}' ADD COLUMN IF NOT EXISTS src_country LowCardinality(String) CODEC(ZSTD(1));

-- 0040_flow_enrichment
ALTER TABLE nettel.flows ON CLUSTER '{cluster}' ADD COLUMN IF NOT EXISTS dst_country LowCardinality(String) CODEC(ZSTD(1));

-- 0040_flow_enrichment
ALTER TABLE nettel.flows ON CLUSTER '{cluster}' ADD COLUMN IF NOT EXISTS src_net_name LowCardinality(String) CODEC(ZSTD(1));

-- 0040_flow_enrichment
ALTER TABLE nettel.flows ON CLUSTER '{cluster}' ADD COLUMN IF NOT EXISTS dst_net_name LowCardinality(String) CODEC(ZSTD(1));

-- 0040_flow_enrichment
ALTER TABLE nettel.flows ON CLUSTER '{cluster}' ADD COLUMN IF NOT EXISTS src_net_role LowCardinality(String) CODEC(ZSTD(1));

-- 0040_flow_enrichment
ALTER TABLE nettel.flows ON CLUSTER '{cluster}' ADD COLUMN IF NOT EXISTS dst_net_role LowCardinality(String) CODEC(ZSTD(1));

-- 0040_flow_enrichment
ALTER TABLE nettel.flows ON CLUSTER '{cluster}' ADD COLUMN IF NOT EXISTS src_net_site LowCardinality(String) CODEC(ZSTD(1));

-- 0040_flow_enrichment
ALTER TABLE nettel.flows ON CLUSTER '{cluster}' ADD COLUMN IF NOT EXISTS dst_net_site LowCardinality(String) CODEC(ZSTD(1));

-- 0040_flow_enrichment
ALTER TABLE nettel.flows ON CLUSTER '{cluster}' ADD COLUMN IF NOT EXISTS src_net_tenant LowCardinality(String) CODEC(ZSTD(1));

-- 0040_flow_enrichment
ALTER TABLE nettel.flows ON CLUSTER '{cluster}' ADD COLUMN IF NOT EXISTS dst_net_tenant LowCardinality(String) CODEC(ZSTD(1));

-- 0040_flow_enrichment
ALTER TABLE nettel.flows ON CLUSTER '{cluster}' ADD COLUMN IF NOT EXISTS enrichment_version UInt32 CODEC(ZSTD(1));

-- 0041_enrichment_tables
CREATE TABLE IF NOT EXISTS nettel.enrichment_versions ON CLUSTER '{cluster}' (
  id UInt32, country_db String, as_db String, loaded_at Int64
  ) ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/{shard}/nettel.enrichment_versions', '{replica}', loaded_at) ORDER BY id;

-- 0041_enrichment_tables
CREATE TABLE IF NOT EXISTS nettel.as_names ON CLUSTER '{cluster}' (
  asn UInt32, name String, as_db String, loaded_at Int64
  ) ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/{shard}/nettel.as_names', '{replica}', loaded_at) ORDER BY (asn, as_db);

-- 0042_workspace_networks
CREATE TABLE IF NOT EXISTS nettel.workspace_networks ON CLUSTER '{cluster}' (
  org_id String, version UInt64, networks String, created_at Int64, actor String
  ) ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/{shard}/nettel.workspace_networks', '{replica}') ORDER BY (org_id, version);

-- 0045_exporter_interfaces
CREATE TABLE IF NOT EXISTS nettel.exporter_interfaces ON CLUSTER '{cluster}' (
  org_id String, exporter String, if_index UInt32, name String, description String, speed UInt64,
  source String, boundary String, connectivity String, provider String, rules_version UInt64,
  updated_at Int64, version UInt64
  ) ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/{shard}/nettel.exporter_interfaces', '{replica}', version) ORDER BY (org_id, exporter, if_index);

-- 0045_exporter_interfaces
CREATE TABLE IF NOT EXISTS nettel.exporter_classes ON CLUSTER '{cluster}' (
  org_id String, exporter String, exporter_name String, exporter_group String, exporter_role String,
  exporter_site String, exporter_region String, rules_version UInt64, updated_at Int64, version UInt64
  ) ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/{shard}/nettel.exporter_classes', '{replica}', version) ORDER BY (org_id, exporter);

-- 0046_exporter_snmp
CREATE TABLE IF NOT EXISTS nettel.exporter_snmp ON CLUSTER '{cluster}' (
  org_id String, exporter_id String, snmp String, interfaces String, updated_at Int64, actor String, version UInt64
  ) ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/{shard}/nettel.exporter_snmp', '{replica}', version) ORDER BY (org_id, exporter_id);

-- 0046_exporter_snmp
CREATE TABLE IF NOT EXISTS nettel.snmp_agents ON CLUSTER '{cluster}' (
  org_id String, exporter_id String, address String, last_attempt Int64, last_success Int64, failing_since Int64,
  error String, interfaces UInt32, version UInt64
  ) ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/{shard}/nettel.snmp_agents', '{replica}', version) ORDER BY (org_id, exporter_id);

-- 0047_classification_rules
CREATE TABLE IF NOT EXISTS nettel.classification_rules ON CLUSTER '{cluster}' (
  org_id String, version UInt64, rules String, created_at Int64, actor String
  ) ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/{shard}/nettel.classification_rules', '{replica}') ORDER BY (org_id, version);

-- 0048_dimension_rollups
CREATE TABLE IF NOT EXISTS nettel.flows_dims_1m ON CLUSTER '{cluster}' (
  org_id LowCardinality(String), minute DateTime CODEC(DoubleDelta, ZSTD(1)), exporter IPv6, in_if UInt32, out_if UInt32, protocol LowCardinality(String), src_as UInt32, dst_as UInt32, src_country LowCardinality(String), dst_country LowCardinality(String), src_net_name LowCardinality(String), dst_net_name LowCardinality(String), write_id UInt64 CODEC(ZSTD(1)),
  bytes UInt64 CODEC(T64, ZSTD(1)), packets UInt64 CODEC(T64, ZSTD(1)), flows UInt64 CODEC(T64, ZSTD(1))
  ) ENGINE = ReplicatedSummingMergeTree('/clickhouse/tables/{shard}/nettel.flows_dims_1m', '{replica}', (bytes, packets, flows)) PARTITION BY toDate(minute)
  ORDER BY (org_id, minute, exporter, in_if, out_if, protocol, src_as, dst_as, src_country, dst_country, src_net_name, dst_net_name, write_id) TTL toDateTime(minute) + INTERVAL 30 DAY;

-- 0048_dimension_rollups
CREATE TABLE IF NOT EXISTS nettel.flows_dims_5m ON CLUSTER '{cluster}' (
  org_id LowCardinality(String), minute DateTime CODEC(DoubleDelta, ZSTD(1)), exporter IPv6, in_if UInt32, out_if UInt32, protocol LowCardinality(String), src_as UInt32, dst_as UInt32, src_country LowCardinality(String), dst_country LowCardinality(String), src_net_name LowCardinality(String), dst_net_name LowCardinality(String), write_id UInt64 CODEC(ZSTD(1)),
  bytes UInt64 CODEC(T64, ZSTD(1)), packets UInt64 CODEC(T64, ZSTD(1)), flows UInt64 CODEC(T64, ZSTD(1))
  ) ENGINE = ReplicatedSummingMergeTree('/clickhouse/tables/{shard}/nettel.flows_dims_5m', '{replica}', (bytes, packets, flows)) PARTITION BY toDate(minute)
  ORDER BY (org_id, minute, exporter, in_if, out_if, protocol, src_as, dst_as, src_country, dst_country, src_net_name, dst_net_name, write_id) TTL toDateTime(minute) + INTERVAL 90 DAY;

-- 0048_dimension_rollups
CREATE TABLE IF NOT EXISTS nettel.flows_dims_1h ON CLUSTER '{cluster}' (
  org_id LowCardinality(String), minute DateTime CODEC(DoubleDelta, ZSTD(1)), exporter IPv6, in_if UInt32, out_if UInt32, protocol LowCardinality(String), src_as UInt32, dst_as UInt32, src_country LowCardinality(String), dst_country LowCardinality(String), src_net_name LowCardinality(String), dst_net_name LowCardinality(String), write_id UInt64 CODEC(ZSTD(1)),
  bytes UInt64 CODEC(T64, ZSTD(1)), packets UInt64 CODEC(T64, ZSTD(1)), flows UInt64 CODEC(T64, ZSTD(1))
  ) ENGINE = ReplicatedSummingMergeTree('/clickhouse/tables/{shard}/nettel.flows_dims_1h', '{replica}', (bytes, packets, flows)) PARTITION BY toDate(minute)
  ORDER BY (org_id, minute, exporter, in_if, out_if, protocol, src_as, dst_as, src_country, dst_country, src_net_name, dst_net_name, write_id) TTL toDateTime(minute) + INTERVAL 400 DAY;

-- 0048_dimension_rollups
CREATE MATERIALIZED VIEW IF NOT EXISTS nettel.flows_dims_1m_mv ON CLUSTER '{cluster}' TO nettel.flows_dims_1m AS
  SELECT org_id, if(write_id = 0, bucket, toDateTime(toStartOfInterval(now(), INTERVAL 60 SECOND))) AS minute, exporter, in_if, out_if, protocol, src_as, dst_as, src_country, dst_country, src_net_name, dst_net_name, write_id, bytes, packets, flows FROM (
  SELECT org_id, toDateTime(toStartOfInterval(ts, INTERVAL 60 SECOND)) AS bucket, exporter, in_if, out_if, protocol, src_as, dst_as, src_country, dst_country, src_net_name, dst_net_name, write_id, sum(bytes) AS bytes, sum(packets) AS packets, count() AS flows
  FROM nettel.flows GROUP BY GROUPING SETS ((org_id, bucket, exporter, in_if, out_if, protocol, src_as, dst_as, src_country, dst_country, src_net_name, dst_net_name), (write_id)) HAVING write_id != 0 OR org_id != '');

-- 0048_dimension_rollups
CREATE MATERIALIZED VIEW IF NOT EXISTS nettel.flows_dims_5m_mv ON CLUSTER '{cluster}' TO nettel.flows_dims_5m AS
  SELECT org_id, bucket AS minute, exporter, in_if, out_if, protocol, src_as, dst_as, src_country, dst_country, src_net_name, dst_net_name, write_id, bytes, packets, flows FROM (
  SELECT org_id, toDateTime(toStartOfInterval(minute, INTERVAL 300 SECOND)) AS bucket, exporter, in_if, out_if, protocol, src_as, dst_as, src_country, dst_country, src_net_name, dst_net_name, write_id, sum(bytes) AS bytes, sum(packets) AS packets, sum(flows) AS flows
  FROM nettel.flows_dims_1m GROUP BY org_id, bucket, exporter, in_if, out_if, protocol, src_as, dst_as, src_country, dst_country, src_net_name, dst_net_name, write_id);

-- 0048_dimension_rollups
CREATE MATERIALIZED VIEW IF NOT EXISTS nettel.flows_dims_1h_mv ON CLUSTER '{cluster}' TO nettel.flows_dims_1h AS
  SELECT org_id, bucket AS minute, exporter, in_if, out_if, protocol, src_as, dst_as, src_country, dst_country, src_net_name, dst_net_name, write_id, bytes, packets, flows FROM (
  SELECT org_id, toDateTime(toStartOfInterval(minute, INTERVAL 3600 SECOND)) AS bucket, exporter, in_if, out_if, protocol, src_as, dst_as, src_country, dst_country, src_net_name, dst_net_name, write_id, sum(bytes) AS bytes, sum(packets) AS packets, sum(flows) AS flows
  FROM nettel.flows_dims_5m GROUP BY org_id, bucket, exporter, in_if, out_if, protocol, src_as, dst_as, src_country, dst_country, src_net_name, dst_net_name, write_id);

-- 0049_dimension_rollup_hourly
DROP VIEW IF EXISTS nettel.flows_dims_1m_mv ON CLUSTER '{cluster}';

-- 0049_dimension_rollup_hourly
DROP VIEW IF EXISTS nettel.flows_dims_5m_mv ON CLUSTER '{cluster}';

-- 0049_dimension_rollup_hourly
DROP VIEW IF EXISTS nettel.flows_dims_1h_mv ON CLUSTER '{cluster}';

-- 0049_dimension_rollup_hourly
CREATE MATERIALIZED VIEW IF NOT EXISTS nettel.flows_dims_1h_mv ON CLUSTER '{cluster}' TO nettel.flows_dims_1h AS
  SELECT org_id, if(write_id = 0, bucket, toDateTime(toStartOfInterval(now(), INTERVAL 3600 SECOND))) AS minute, exporter, in_if, out_if, protocol, src_as, dst_as, src_country, dst_country, src_net_name, dst_net_name, write_id, bytes, packets, flows FROM (
  SELECT org_id, toDateTime(toStartOfInterval(ts, INTERVAL 3600 SECOND)) AS bucket, exporter, in_if, out_if, protocol, src_as, dst_as, src_country, dst_country, src_net_name, dst_net_name, write_id, sum(bytes) AS bytes, sum(packets) AS packets, count() AS flows
  FROM nettel.flows GROUP BY GROUPING SETS ((org_id, bucket, exporter, in_if, out_if, protocol, src_as, dst_as, src_country, dst_country, src_net_name, dst_net_name), (write_id)) HAVING write_id != 0 OR org_id != '');

-- 0049_dimension_rollup_hourly
DROP TABLE IF EXISTS nettel.flows_dims_1m ON CLUSTER '{cluster}';

-- 0060_saved_views
CREATE TABLE IF NOT EXISTS nettel.saved_views ON CLUSTER '{cluster}' (
  org_id String, id String, version UInt64, name String, state String, deleted UInt8,
  created_at Int64, updated_at Int64, created_by String, updated_by String
  ) ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/{shard}/nettel.saved_views', '{replica}') ORDER BY (org_id, id, version);

-- 0061_attack_windows
CREATE TABLE IF NOT EXISTS nettel.attack_windows ON CLUSTER '{cluster}' (
  org_id String, event_id String, scope String, target String, host_group String, window_end Int64,
  type String, vector String, detector_version UInt32, rules_version UInt64, rates String, details String, created_at Int64
  ) ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/{shard}/nettel.attack_windows', '{replica}') ORDER BY (org_id, target, window_end, event_id);

-- 0062_folded_rollups
CREATE TABLE IF NOT EXISTS nettel.rollup_marks ON CLUSTER '{cluster}' (
  org_id LowCardinality(String), bucket DateTime, kind String, at DateTime
  ) ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/{shard}/nettel.rollup_marks', '{replica}', at) PARTITION BY toDate(bucket) ORDER BY (org_id, bucket, kind) TTL toDateTime(bucket) + INTERVAL 30 DAY;

-- 0062_folded_rollups
CREATE MATERIALIZED VIEW IF NOT EXISTS nettel.rollup_marks_mv ON CLUSTER '{cluster}' TO nettel.rollup_marks AS
  SELECT org_id, toDateTime(toStartOfInterval(ts, INTERVAL 300 SECOND)) AS bucket, 'pending' AS kind, now() AS at FROM nettel.flows GROUP BY org_id, bucket;

-- 0062_folded_rollups
DROP VIEW IF EXISTS nettel.flows_5m_mv ON CLUSTER '{cluster}';

-- 0062_folded_rollups
DROP VIEW IF EXISTS nettel.flows_1h_mv ON CLUSTER '{cluster}';

-- 0062_folded_rollups
DROP VIEW IF EXISTS nettel.flows_src_5m_mv ON CLUSTER '{cluster}';

-- 0062_folded_rollups
DROP VIEW IF EXISTS nettel.flows_src_1h_mv ON CLUSTER '{cluster}';

-- 0063_folded_dimension_rollups
CREATE TABLE IF NOT EXISTS nettel.flows_dims_5m ON CLUSTER '{cluster}' (
  org_id LowCardinality(String), minute DateTime CODEC(DoubleDelta, ZSTD(1)), exporter IPv6, in_if UInt32, out_if UInt32, protocol LowCardinality(String), src_as UInt32, dst_as UInt32, src_country LowCardinality(String), dst_country LowCardinality(String), src_net_name LowCardinality(String), dst_net_name LowCardinality(String), write_id UInt64 CODEC(ZSTD(1)),
  bytes UInt64 CODEC(T64, ZSTD(1)), packets UInt64 CODEC(T64, ZSTD(1)), flows UInt64 CODEC(T64, ZSTD(1))
  ) ENGINE = ReplicatedSummingMergeTree('/clickhouse/tables/{shard}/nettel.flows_dims_5m', '{replica}', (bytes, packets, flows)) PARTITION BY toDate(minute)
  ORDER BY (org_id, minute, exporter, in_if, out_if, protocol, src_as, dst_as, src_country, dst_country, src_net_name, dst_net_name, write_id) TTL toDateTime(minute) + INTERVAL 90 DAY;

-- 0063_folded_dimension_rollups
DROP VIEW IF EXISTS nettel.flows_dims_1h_mv ON CLUSTER '{cluster}';
