import type { Migration } from './migration';

/** Policies and replays: versioned rows, the highest version wins. */
export const governanceMigrations: Migration[] = [
  {
    id: '0007_policies',
    statements: ({ db }) => [
      `CREATE TABLE IF NOT EXISTS ${db}.policies (
        org_id String, id String, name String, requires_approval UInt8, allow_execution UInt8,
        environments String, severities String, max_window_minutes UInt32, approval_timeout_minutes Float64,
        status String, created_at Int64, updated_at Int64, version UInt64
      ) ENGINE = ReplacingMergeTree(version) ORDER BY (org_id, id)`,
    ],
  },
  {
    id: '0008_replays',
    statements: ({ db }) => [
      `CREATE TABLE IF NOT EXISTS ${db}.replays (
        org_id String, replay_id String, incident_id String, status String, requested_by String,
        requested_at Int64, updated_at Int64, window_minutes UInt32, approvals String, report String, error String,
        version UInt64
      ) ENGINE = ReplacingMergeTree(version) ORDER BY (org_id, replay_id)`,
    ],
  },
];
