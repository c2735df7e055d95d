import type { Migration } from '../migrations/migration';

/**
 * The tables of interface enrichment and classification, the same DDL on
 * every generation (Strings, UInt*, epoch milliseconds in Int64, which 18.16
 * has). Every table holds versioned rows, the highest version wins
 * (ReplacingMergeTree, read with FINAL), as the exporter registry does.
 *
 * - `exporter_interfaces`: what is known of each interface of an exporter
 *   (keyed by workspace, exporter address and ifIndex), from SNMP or the
 *   static override, with its classification under the rules version named.
 *   Flows keep only the numbers; names are joined in when read.
 * - `exporter_classes`: an exporter's group, role, site and region.
 * - `exporter_snmp`: how to poll an exporter (credentials sealed) and its
 *   static interfaces; `snmp_agents`: how its agent last answered.
 * - `classification_rules`: a workspace's rule text, one row per version.
 */
export const enrichmentMigrations: Migration[] = [
  {
    id: '0045_exporter_interfaces',
    statements: ({ db }) => [
      `CREATE TABLE IF NOT EXISTS ${db}.exporter_interfaces (
        org_id String, exporter String, if_index UInt32, name String, description String, speed UInt64,
        source String, boundary String, connectivity String, provider String, rules_version UInt64,
        updated_at Int64, version UInt64
      ) ENGINE = ReplacingMergeTree(version) ORDER BY (org_id, exporter, if_index)`,
      `CREATE TABLE IF NOT EXISTS ${db}.exporter_classes (
        org_id String, exporter String, exporter_name String, exporter_group String, exporter_role String,
        exporter_site String, exporter_region String, rules_version UInt64, updated_at Int64, version UInt64
      ) ENGINE = ReplacingMergeTree(version) ORDER BY (org_id, exporter)`,
    ],
  },
  {
    id: '0046_exporter_snmp',
    statements: ({ db }) => [
      `CREATE TABLE IF NOT EXISTS ${db}.exporter_snmp (
        org_id String, exporter_id String, snmp String, interfaces String, updated_at Int64, actor String, version UInt64
      ) ENGINE = ReplacingMergeTree(version) ORDER BY (org_id, exporter_id)`,
      `CREATE TABLE IF NOT EXISTS ${db}.snmp_agents (
        org_id String, exporter_id String, address String, last_attempt Int64, last_success Int64, failing_since Int64,
        error String, interfaces UInt32, version UInt64
      ) ENGINE = ReplacingMergeTree(version) ORDER BY (org_id, exporter_id)`,
    ],
  },
  {
    id: '0047_classification_rules',
    statements: ({ db }) => [
      `CREATE TABLE IF NOT EXISTS ${db}.classification_rules (
        org_id String, version UInt64, rules String, created_at Int64, actor String
      ) ENGINE = ReplacingMergeTree ORDER BY (org_id, version)`,
    ],
  },
];
