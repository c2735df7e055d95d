import type { Migration } from './migration';

/**
 * Per-workspace playbooks (core/playbooks.ts), one immutable row per version
 * of the whole document, as detection rules are kept (the same DDL on every
 * generation: Strings and epoch milliseconds in Int64).
 */
export const playbookMigrations: Migration[] = [
  {
    id: '0020_playbooks',
    statements: ({ db }) => [
      `CREATE TABLE IF NOT EXISTS ${db}.playbooks (
        org_id String, version UInt64, playbooks String, created_at Int64, actor String
      ) ENGINE = ReplacingMergeTree ORDER BY (org_id, version)`,
    ],
  },
];
