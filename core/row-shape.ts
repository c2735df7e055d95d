import { rowPrefixOf } from './json-lines';

/** A stored row's fields in the order its producers write them, each with the JSON type of its value. */
export type RowFields = ReadonlyArray<readonly [name: string, type: 'string' | 'number']>;

/** A row shape compiled for the scanner: field names as bytes, and whether each takes a string. */
export interface RowShape {
  readonly names: readonly Uint8Array[];
  readonly strings: readonly boolean[];
}

export const rowShapeOf = (fields: RowFields): RowShape => ({
  names: fields.map(([name]) => Buffer.from(name, 'latin1')),
  strings: fields.map(([, type]) => type === 'string'),
});

const newline = 0x0a;
const quote = 0x22;
const backslash = 0x5c;
const comma = 0x2c;
const colon = 0x3a;
const closingBrace = 0x7d;

/**
 * Whether every line of `data` is exactly one flat JSON object of `org`'s
 * rows: `{"org_id":"<org>",` then the shape's fields, each at most once and
 * in the shape's order, strings as strings and numbers as numbers, no
 * whitespace, nothing nested, and the closing brace the line's last
 * character. A parse, not a prefix-and-suffix test: ClickHouse's JSONEachRow
 * reads `{…A…}{…B…}` (or with `,` or a space between) on one line as two
 * rows and stores B's, so a line must close where its first object closes.
 * One pass over the bytes with no allocation: this runs on every message the
 * stream workers pull (bench/results/2026-11-29-row-screen.md measures it),
 * where JSON.parse of every line cost half a core at the collector's rate.
 */
export function hasRowsOf(data: Uint8Array, org: string, shape: RowShape): boolean {
  // Buffer's indexOf is memchr over a line (a TypedArray's is a byte loop: a third slower in all).
  const bytes = Buffer.isBuffer(data) ? data : Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  const prefix = Buffer.from(rowPrefixOf(org), 'latin1');
  const length = bytes.length;
  if (length === 0 || bytes[length - 1] !== newline) return false;
  for (let start = 0; start < length; ) {
    const end = bytes.indexOf(newline, start);
    const after = lineAfterPrefix(bytes, start, end, prefix);
    if (after < 0 || !fieldsEndAt(bytes, after, end, shape)) return false;
    start = end + 1;
  }
  return true;
}

/** Where the line's fields after `org_id` start, or -1 when it does not open with the org's prefix. */
function lineAfterPrefix(bytes: Uint8Array, start: number, end: number, prefix: Uint8Array): number {
  if (end - start < prefix.length + 1) return -1;
  for (let i = 0; i < prefix.length; i += 1) if (bytes[start + i] !== prefix[i]) return -1;
  return start + prefix.length;
}

/** Whether `"name":value` pairs separated by commas run from `at` to the closing brace just before `end`. */
function fieldsEndAt(bytes: Uint8Array, at: number, end: number, shape: RowShape): boolean {
  // Field 0 is org_id, which the prefix held.
  let field = 1;
  let pos = at;
  for (;;) {
    if (bytes[pos] !== quote) return false;
    field = fieldAtOrAfter(bytes, pos + 1, shape, field);
    if (field < 0) return false;
    pos += shape.names[field]!.length + 2;
    if (bytes[pos] !== colon) return false;
    pos = shape.strings[field] ? afterString(bytes, pos + 1, end) : afterNumber(bytes, pos + 1, end);
    if (pos < 0) return false;
    field += 1;
    if (bytes[pos] === comma) {
      pos += 1;
      continue;
    }
    return bytes[pos] === closingBrace && pos === end - 1;
  }
}

/** The index of the field whose name and closing quote start at `from`, looked for from `field` on (order kept, none twice); -1 if none. */
function fieldAtOrAfter(bytes: Uint8Array, from: number, shape: RowShape, field: number): number {
  for (let f = field; f < shape.names.length; f += 1) {
    const name = shape.names[f]!;
    let i = 0;
    while (i < name.length && name[i] === bytes[from + i]) i += 1;
    if (i === name.length && bytes[from + i] === quote) return f;
  }
  return -1;
}

/** The position after a JSON string starting at `at`, or -1: escapes checked, no control character. */
function afterString(bytes: Uint8Array, at: number, end: number): number {
  if (bytes[at] !== quote) return -1;
  for (let i = at + 1; i < end; i += 1) {
    const b = bytes[i]!;
    if (b === quote) return i + 1;
    if (b < 0x20) return -1;
    if (b === backslash) {
      const e = bytes[i + 1]!;
      if (!isEscape(e)) return -1;
      if (e === 0x75) {
        for (let h = i + 2; h < i + 6; h += 1) if (!isHexDigit(bytes[h]!)) return -1;
        i += 4;
      }
      i += 1;
    }
  }
  return -1;
}

/** The characters JSON allows after a backslash (`u` is followed by four hex digits). */
const isEscape = (b: number) => b === 0x22 || b === 0x5c || b === 0x2f || b === 0x62 || b === 0x66 || b === 0x6e || b === 0x72 || b === 0x74 || b === 0x75;
const isHexDigit = (b: number) => (b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x46) || (b >= 0x61 && b <= 0x66);
const isDigit = (b: number) => b >= 0x30 && b <= 0x39;

/** The position after a JSON number starting at `at`, or -1 (JSON's grammar: sign, digits, fraction, exponent). */
function afterNumber(bytes: Uint8Array, at: number, end: number): number {
  let i = at;
  if (bytes[i] === 0x2d) i += 1;
  const intStart = i;
  while (i < end && isDigit(bytes[i]!)) i += 1;
  if (i === intStart || (bytes[intStart] === 0x30 && i - intStart > 1)) return -1;
  if (bytes[i] === 0x2e) {
    const fracStart = (i += 1);
    while (i < end && isDigit(bytes[i]!)) i += 1;
    if (i === fracStart) return -1;
  }
  if (bytes[i] === 0x65 || bytes[i] === 0x45) {
    i += 1;
    if (bytes[i] === 0x2b || bytes[i] === 0x2d) i += 1;
    const expStart = i;
    while (i < end && isDigit(bytes[i]!)) i += 1;
    if (i === expStart) return -1;
  }
  return i;
}
