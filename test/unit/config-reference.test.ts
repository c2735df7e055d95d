import fs from 'node:fs';
import path from 'node:path';
import { settingDocs } from '../../core/settings';
import { envSchema } from '../../service/config';
import { configurationReference, referenceCommand, referenceEnd, referenceStart, withReference } from '../../service/config-reference';

const page = path.resolve(__dirname, '../../docs/configuration.md');

/** The first line where two texts part, with both versions of it. */
function firstDifference(current: string, generated: string): string {
  const a = current.split('\n');
  const b = generated.split('\n');
  const line = a.findIndex((text, i) => text !== b[i]);
  const at = line < 0 ? a.length : line;
  return `line ${at + 1}:\n  on the page: ${a[at] ?? '(end of the page)'}\n  generated:   ${b[at] ?? '(end of the reference)'}`;
}

describe('the configuration reference', () => {
  test('docs/configuration.md carries the reference the components\' settings generate', () => {
    const current = fs.readFileSync(page, 'utf8');
    const generated = withReference(current);
    if (current !== generated) {
      throw new Error(`docs/configuration.md is stale: run \`${referenceCommand}\` and commit the page.\nIt differs from the settings at ${firstDifference(current, generated)}`);
    }
  });

  test('every variable the service reads has its line, with its default as the service applies it', () => {
    const reference = configurationReference();
    const undocumented = Object.entries(envSchema.shape).filter(([name, schema]) => !settingDocs.has(schema) || !reference.includes(`| \`${name}\` |`));
    expect(undocumented.map(([name]) => name)).toEqual([]);
    expect(reference).toContain('| `PORT` | `8080` |');
    expect(reference).toContain('| `NATS_STREAM_MAX_BYTES` | `8589934592` (8 GiB) |');
    expect(reference).toContain('| `ROLES` | `api,stream-workers,temporal-worker,collector` |');
    expect(reference).toContain('| `TRUSTED_PROXIES` | empty |');
    expect(reference).toContain('| `ADMIN_API_KEY` | generated |');
    expect(reference).toContain('| `METRICS_TOKEN` | unset |');
  });

  test('the prose around the reference is kept when it is regenerated', () => {
    const before = `# Title\n\nProse.\n\n${referenceStart}\nold table\n${referenceEnd}\n\nMore prose.\n`;
    const after = withReference(before);
    expect(after.startsWith(`# Title\n\nProse.\n\n${referenceStart}\n\n### `)).toBe(true);
    expect(after.endsWith(`\n\n${referenceEnd}\n\nMore prose.\n`)).toBe(true);
    expect(after).not.toContain('old table');
  });

  test('a page without the markers is refused, naming them', () => {
    expect(() => withReference('# Configuration\n')).toThrow(/no reference markers/);
  });
});
