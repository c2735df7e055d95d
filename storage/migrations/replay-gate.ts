import { str } from '../sql';
import type { Migration } from './migration';

/**
 * Replays carry the approval gate their workflow opened
 * (api/routes/replays.ts: decision_deadline, approval_policies): when it
 * closes (epoch ms; 0 before it opened) and the policies that asked for it
 * (JSON). 18.16 has no `ADD COLUMN IF NOT EXISTS`: there the columns are
 * looked up first, so the migration can run again after a crash.
 */
const columns = ['decision_deadline Int64 DEFAULT 0', "approval_policies String DEFAULT '[]'"];

export const replayGateMigrations: Migration[] = [
  {
    id: '0016_replay_approval_gate',
    statements: ({ db, dialect }) => (dialect.generation === 'legacy' ? [] : columns.map((c) => `ALTER TABLE ${db}.replays ADD COLUMN IF NOT EXISTS ${c}`)),
    async run(ch, { db, dialect }) {
      if (dialect.generation !== 'legacy') return;
      const present = new Set(
        (await ch.query<{ name: string }>(`SELECT name FROM system.columns WHERE database = ${str(db)} AND table = 'replays'`)).map((r) => r.name),
      );
      for (const column of columns) if (!present.has(column.split(' ')[0]!)) await ch.exec(`ALTER TABLE ${db}.replays ADD COLUMN ${column}`);
    },
  },
];
