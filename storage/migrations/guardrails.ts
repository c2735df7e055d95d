import type { Migration } from './migration';

/**
 * Guardrails with two pairs of eyes (issue 32, item 4), the same DDL on every
 * generation (Strings, UInt8, UInt64, epoch milliseconds in Int64): whether a
 * workspace makes a loosening change wait for a second person (versioned
 * rows, the highest version wins), and the changes that wait or waited
 * (one row per state, the highest version wins). Nothing stored before is
 * touched: a workspace without a row keeps one pair of eyes, as before.
 */
export const guardrailMigrations: Migration[] = [
  {
    id: '0028_guardrails',
    statements: ({ db }) => [
      `CREATE TABLE IF NOT EXISTS ${db}.guardrail_settings (
        org_id String, four_eyes UInt8, version UInt64, updated_at Int64, actor String
      ) ENGINE = ReplacingMergeTree(version) ORDER BY org_id`,
      `CREATE TABLE IF NOT EXISTS ${db}.guardrail_changes (
        org_id String, change_id String, kind String, target String, change String, reasons String,
        requested_by String, requested_by_person String, requested_at Int64,
        status String, decided_by String, decided_by_person String, decided_at Int64, version UInt64
      ) ENGINE = ReplacingMergeTree(version) ORDER BY (org_id, change_id)`,
    ],
  },
];
