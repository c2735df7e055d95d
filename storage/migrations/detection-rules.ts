import { str } from '../sql';
import type { Migration } from './migration';

/**
 * Per-workspace detection rules, one immutable row per version (the same DDL
 * on every generation: Strings and epoch milliseconds in Int64), and the
 * version each incident was computed under. Incidents stored before this
 * migration read as version 0, the defaults they were computed with.
 * 18.16 has no `ADD COLUMN IF NOT EXISTS`: there the column is looked up
 * first, so the migration can run again after a crash.
 */
const rulesVersionColumn = 'rules_version UInt64 DEFAULT 0';

export const detectionRulesMigrations: Migration[] = [
  {
    id: '0014_detection_rules',
    statements: ({ db, dialect }) => [
      `CREATE TABLE IF NOT EXISTS ${db}.detection_rules (
        org_id String, version UInt64, rules String, created_at Int64, actor String
      ) ENGINE = ReplacingMergeTree ORDER BY (org_id, version)`,
      ...(dialect.generation === 'legacy' ? [] : [`ALTER TABLE ${db}.incidents ADD COLUMN IF NOT EXISTS ${rulesVersionColumn}`]),
    ],
    async run(ch, { db, dialect }) {
      if (dialect.generation !== 'legacy') return;
      const present = await ch.query<{ name: string }>(
        `SELECT name FROM system.columns WHERE database = ${str(db)} AND table = 'incidents' AND name = 'rules_version'`,
      );
      if (present.length === 0) await ch.exec(`ALTER TABLE ${db}.incidents ADD COLUMN ${rulesVersionColumn}`);
    },
  },
];
