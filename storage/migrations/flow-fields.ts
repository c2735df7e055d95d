import { str } from '../sql';
import type { Migration, MigrationContext } from './migration';

/**
 * The fields flow exporters add (see core/flow.ts), as columns of the raw
 * flows: absent values are the column defaults (`::` / empty exporter, 0).
 * Rollups keep their keys; analyst queries over these dimensions read the
 * raw flows. 18.16 has no `ADD COLUMN IF NOT EXISTS`: there the columns
 * missing are found first, so the migration can run again after a crash.
 */
function columns({ dialect: d }: MigrationContext): Array<[string, string]> {
  const small = `${d.codec('ZSTD(1)')}`;
  return [
    ['exporter', `${d.addressType} ${d.codec('ZSTD(3)')}`],
    ['in_if', `UInt32 ${small}`],
    ['out_if', `UInt32 ${small}`],
    ['src_as', `UInt32 ${small}`],
    ['dst_as', `UInt32 ${small}`],
    ['tcp_flags', `UInt16 ${small}`],
    ['tos', `UInt8 ${small}`],
    ['flow_start', `${d.timeType} ${d.codec('Delta, ZSTD(1)')}`],
    ['flow_end', `${d.timeType} ${d.codec('Delta, ZSTD(1)')}`],
    ['sampling_rate', `UInt32 ${small}`],
  ];
}

export const flowFieldMigrations: Migration[] = [
  {
    id: '0013_flow_exporter_fields',
    statements: (ctx) =>
      ctx.dialect.generation === 'legacy' ? [] : columns(ctx).map(([name, type]) => `ALTER TABLE ${ctx.db}.flows ADD COLUMN IF NOT EXISTS ${name} ${type}`),
    async run(ch, ctx) {
      if (ctx.dialect.generation !== 'legacy') return;
      const present = new Set(
        (await ch.query<{ name: string }>(`SELECT name FROM system.columns WHERE database = ${str(ctx.db)} AND table = 'flows'`)).map((r) => r.name),
      );
      for (const [name, type] of columns(ctx)) if (!present.has(name)) await ch.exec(`ALTER TABLE ${ctx.db}.flows ADD COLUMN ${name} ${type}`);
    },
  },
];
