import type { z } from 'zod';
import { settingDocs, type SettingDoc } from '../core/settings';
import { componentSettings } from './config';

/**
 * The configuration reference of docs/configuration.md, generated from every
 * component's settings (each variable's default, and its line): a table per
 * component, between two markers that keep the page's prose around it.
 * `npm run config:reference` writes it; a unit test fails when it is stale.
 */
export const referenceCommand = 'npm run config:reference';
export const referenceStart = `<!-- generated from each component's settings (*.config.ts) by \`${referenceCommand}\`: edit those, not this -->`;
export const referenceEnd = '<!-- end of the generated reference -->';

const code = (text: string) => `\`${text}\``;
const units = [['TiB', 1024 ** 4], ['GiB', 1024 ** 3], ['MiB', 1024 ** 2], ['KiB', 1024]] as const;

/** A byte count in the largest binary unit it is a whole number of, e.g. `8589934592` (8 GiB). */
function bytes(value: number): string {
  const unit = units.find(([, size]) => value >= size && value % size === 0);
  return unit ? `${code(String(value))} (${value / unit[1]} ${unit[0]})` : code(String(value));
}

/** What an unset variable gives, as the service applies it: its parsed default, or what its declaration says. */
function shownDefault(name: string, schema: z.ZodType, doc: SettingDoc): string {
  if (doc.whenUnset) return doc.whenUnset;
  const parsed = schema.safeParse(undefined);
  const value: unknown = parsed.success ? parsed.data : undefined;
  if (value === undefined) return 'unset';
  if (Array.isArray(value)) return value.length ? code(value.join(',')) : 'empty';
  if (value === '') return 'empty';
  if (typeof value === 'number' && /_BYTES$|_FILE_STORE$/.test(name)) return bytes(value);
  return code(typeof value === 'string' ? value : JSON.stringify(value));
}

const cell = (text: string) => text.replace(/\|/g, '\\|');

function table(title: string, shape: Record<string, z.ZodType>): string {
  const rows = Object.entries(shape).map(([name, schema]) => {
    const doc = settingDocs.get(schema);
    if (!doc) throw new Error(`${name}: no line for the configuration reference (declare it with setting())`);
    return `| ${code(name)} | ${cell(shownDefault(name, schema, doc))} | ${cell(doc.description)} |`;
  });
  return [`### ${title}`, '', '| variable | default | meaning |', '|---|---|---|', ...rows].join('\n');
}

/** Every component's table, in the order service/config.ts composes them. */
export function configurationReference(): string {
  return componentSettings.map(({ title, shape }) => table(title, shape)).join('\n\n');
}

/** The page with its reference, between the markers, regenerated; the rest of the page as it was. */
export function withReference(page: string): string {
  const start = page.indexOf(referenceStart);
  const end = page.indexOf(referenceEnd);
  if (start < 0 || end < start) throw new Error(`the page has no reference markers: put ${referenceStart} and ${referenceEnd} where the tables go`);
  return `${page.slice(0, start + referenceStart.length)}\n\n${configurationReference()}\n\n${page.slice(end)}`;
}
