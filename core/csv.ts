/**
 * CSV as RFC 4180 writes it: a header row, then one row per record, every
 * line ended by CRLF; a field holding a comma, a double quote, CR or LF is
 * quoted, its quotes doubled. A null is the empty field; a number is written
 * as JSON writes it, so a CSV answer holds the very numbers of the JSON one.
 *
 * A text field that starts with `=`, `+`, `-`, `@`, a tab or CR gets a
 * leading `'` (OWASP's advice against CSV injection): spreadsheets run such a
 * field as a formula, and dimension values are written by whoever names an
 * interface, an AS or an exporter (`=cmd|' /C calc'!A0`). Numbers are never
 * changed (a negative number is a number, not a formula), so only text that
 * would have become a formula differs from the JSON.
 */
export type CsvValue = string | number | boolean | null | undefined;

export interface CsvTable {
  columns: readonly string[];
  rows: ReadonlyArray<readonly CsvValue[]>;
}

const formulaStart = /^[=+\-@\t\r]/;
const needsQuotes = /[",\r\n]/;

/** One field: neutralized if it is text that a spreadsheet would run, then quoted if it needs it. */
export function csvField(value: CsvValue): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'number') return Number.isFinite(value) ? String(value) : '';
  const text = typeof value === 'boolean' ? String(value) : formulaStart.test(value) ? `'${value}` : value;
  return needsQuotes.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

/** The whole document: the header row and every row, each line ended by CRLF. */
export function toCsv(table: CsvTable): string {
  const lines = [table.columns, ...table.rows].map((row) => `${row.map(csvField).join(',')}\r\n`);
  return lines.join('');
}
