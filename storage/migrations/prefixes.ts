import type { Migration } from './migration';

/**
 * The prefixes workspaces may act on (core/workspace-prefix.ts), the same
 * DDL on every generation (Strings, UInt64 and epoch milliseconds in Int64,
 * which 18.16 has). Versioned rows like exporters: a declaration, a
 * decision of the platform admin or a removal writes the next version, the
 * highest wins.
 *
 * `range_first` and `range_last` are the prefix's first and last address as
 * sortable text (core/workspace-prefix.ts prefixRange), so an overlap is two
 * string comparisons: 18.16 has no IPv6 CIDR functions.
 */
export const prefixMigrations: Migration[] = [
  {
    id: '0018_workspace_prefixes',
    statements: ({ db }) => [
      `CREATE TABLE IF NOT EXISTS ${db}.workspace_prefixes (
        org_id String, id String, prefix String, range_first String, range_last String, description String,
        status String, created_at Int64, created_by String, updated_at Int64, version UInt64
      ) ENGINE = ReplacingMergeTree(version) ORDER BY (org_id, id)`,
    ],
  },
];
