import type { Migration } from './migration';

/** Workspaces' keys and the audit ledger. */
export const platformMigrations: Migration[] = [
  {
    id: '0001_api_keys',
    statements: ({ db }) => [
      // One row per version of a key; the highest version wins (revocation writes a new version).
      `CREATE TABLE IF NOT EXISTS ${db}.api_keys (
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
      ) ENGINE = ReplacingMergeTree(version) ORDER BY (org_id, key_id)`,
    ],
  },
  {
    id: '0002_audit_log',
    statements: ({ db }) => [
      `CREATE TABLE IF NOT EXISTS ${db}.audit_log (
        org_id String,
        seq UInt64,
        at Int64,
        actor String,
        action String,
        target String,
        details String,
        prev_hash String,
        hash String
      ) ENGINE = MergeTree ORDER BY (org_id, seq)`,
    ],
  },
];
