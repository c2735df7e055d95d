import type { Migration } from './migration';

/**
 * The workspaces' saved views of the visualize page (core/saved-views.ts):
 * one immutable row per version of a view, a deletion being its last
 * version (`deleted = 1`), as the other versioned documents are kept (the
 * same DDL on every generation: Strings, UInt and epoch milliseconds).
 * 0060: ids from 0060 on are this branch's (the rollup work takes the 005x).
 */
export const savedViewMigrations: Migration[] = [
  {
    id: '0060_saved_views',
    statements: ({ db }) => [
      `CREATE TABLE IF NOT EXISTS ${db}.saved_views (
        org_id String, id String, version UInt64, name String, state String, deleted UInt8,
        created_at Int64, updated_at Int64, created_by String, updated_by String
      ) ENGINE = ReplacingMergeTree ORDER BY (org_id, id, version)`,
    ],
  },
];
