import { ipv4Number } from '../ipv4-text';
import { addressKey, type AddressKey } from './address-key';

/**
 * A number by address range, from the CSVs of `@ip-location-db` (`first,last,value[,name]`,
 * inclusive ranges, sorted, not overlapping): typed arrays searched by bisection, about half a
 * million ranges in some 12 MB. The bisection starts from an index by the address's top 16 bits
 * (firstWordIndex), so it reads a handful of neighbouring ranges instead of 19 far apart, each
 * a cache miss (bench/results/2026-11-29-enrichment.md). Two tables: AS numbers (`@ip-location-db/asn`, whose
 * names go to the `as_names` table, where reads resolve them) and countries
 * (`@ip-location-db/geo-whois-asn-country`, each code packed into a number: countryValue).
 */
/** The arrays a range table is made of (its encoded form, core/enrichment/range-table-file.ts, holds them as they are). */
export interface RangeTables {
  v4First: Uint32Array;
  v4Last: Uint32Array;
  v4Values: Uint32Array;
  /** Four words per range bound, most significant first. */
  v6First: Uint32Array;
  v6Last: Uint32Array;
  v6Values: Uint32Array;
}

export class AddressRanges {
  private constructor(
    private readonly v4First: Uint32Array,
    private readonly v4Last: Uint32Array,
    private readonly v4Values: Uint32Array,
    /** Four words per range bound, most significant first. */
    private readonly v6First: Uint32Array,
    private readonly v6Last: Uint32Array,
    private readonly v6Values: Uint32Array,
    readonly names: ReadonlyMap<number, string>,
    private readonly v4Index = firstWordIndex(v4First, 1),
    private readonly v6Index = firstWordIndex(v6First, 4),
  ) {}

  get size(): number {
    return this.v4Values.length + this.v6Values.length;
  }

  /** A table over arrays read back from its encoded form; the caller has checked them (range-table-file.ts). */
  static fromTables(t: RangeTables, names: ReadonlyMap<number, string>): AddressRanges {
    return new AddressRanges(t.v4First, t.v4Last, t.v4Values, t.v6First, t.v6Last, t.v6Values, names);
  }

  /** The arrays this table searches, for its encoded form. */
  get tables(): RangeTables {
    return { v4First: this.v4First, v4Last: this.v4Last, v4Values: this.v4Values, v6First: this.v6First, v6Last: this.v6Last, v6Values: this.v6Values };
  }

  /** Reads the IPv4 and IPv6 CSV texts of AS numbers; lines that are not a range with an AS number are skipped (counted in `skipped`). */
  static fromAsCsv(ipv4Csv: string, ipv6Csv: string): AddressRanges & { skipped: number } {
    return AddressRanges.fromCsv(ipv4Csv, ipv6Csv, asValue, new Map());
  }

  /** Reads the IPv4 and IPv6 CSV texts of countries (ISO 3166-1 alpha-2 codes, as countryValue packs them); other lines are skipped. */
  static fromCountryCsv(ipv4Csv: string, ipv6Csv: string): AddressRanges & { skipped: number } {
    return AddressRanges.fromCsv(ipv4Csv, ipv6Csv, countryValue);
  }

  private static fromCsv(ipv4Csv: string, ipv6Csv: string, valueOf: (field: string) => number, names?: Map<number, string>): AddressRanges & { skipped: number } {
    const v4 = parseRanges(ipv4Csv, 1, valueOf, names);
    const v6 = parseRanges(ipv6Csv, 4, valueOf, names);
    const table = new AddressRanges(v4.first, v4.last, v4.values, v6.first, v6.last, v6.values, names ?? new Map());
    return Object.assign(table, { skipped: v4.skipped + v6.skipped });
  }

  /** The value of an address (text or key), 0 when no range holds it. */
  lookup(address: string | AddressKey | undefined): number {
    const key = typeof address === 'string' ? addressKey(address) : address;
    if (!key) return 0;
    return 'v4' in key ? this.lookupV4(key.v4) : this.lookupV6(key.v6);
  }

  lookupV4(ip: number): number {
    const first = this.v4First;
    const top = ip >>> 16;
    let lo = this.v4Index[top]!;
    let hi = this.v4Index[top + 1]! - 1;
    // The last range starting at or before the address.
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      if (first[mid]! <= ip) lo = mid + 1;
      else hi = mid - 1;
    }
    return hi >= 0 && ip <= this.v4Last[hi]! ? this.v4Values[hi]! : 0;
  }

  lookupV6(words: Uint32Array): number {
    const top = words[0]! >>> 16;
    let lo = this.v6Index[top]!;
    let hi = this.v6Index[top + 1]! - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      if (compareWords(this.v6First, mid, words) <= 0) lo = mid + 1;
      else hi = mid - 1;
    }
    return hi >= 0 && compareWords(this.v6Last, hi, words) >= 0 ? this.v6Values[hi]! : 0;
  }
}

/**
 * For each value of the top 16 bits of a range's first word, the index of the
 * first range starting at or above it (65,537 entries, the last the count).
 * The last range starting at or before an address is then at least the one
 * before its entry and at most the one before the next entry: the
 * bisection's bounds, `hi` ending one below `lo` when no range of its own
 * block starts at or before it, which leaves the previous block's last range.
 */
function firstWordIndex(first: Uint32Array, width: 1 | 4): Uint32Array {
  const count = first.length / width;
  const index = new Uint32Array(65_537);
  let range = 0;
  for (let top = 0; top <= 65_536; top++) {
    while (range < count && first[range * width]! >>> 16 < top) range++;
    index[top] = range;
  }
  return index;
}

/** The bound at `index` (four words) against an address: negative, zero or positive. */
function compareWords(bounds: Uint32Array, index: number, words: Uint32Array): number {
  const at = index * 4;
  for (let i = 0; i < 4; i++) {
    const d = bounds[at + i]! - words[i]!;
    if (d !== 0) return d;
  }
  return 0;
}

interface ParsedRanges {
  first: Uint32Array;
  last: Uint32Array;
  values: Uint32Array;
  skipped: number;
}

/** An AS number field, 0 when it is not one. */
function asValue(text: string): number {
  const asn = /^\d{1,10}$/.test(text) ? Number(text) : 0;
  return asn <= 0xffffffff ? asn : 0;
}

/** A country code as a number (two letters, upper case, one byte each), 0 when the field is not one. */
export function countryValue(text: string): number {
  return /^[A-Za-z]{2}$/.test(text) ? (text.toUpperCase().charCodeAt(0) << 8) | text.toUpperCase().charCodeAt(1) : 0;
}

/** The country code a value of countryValue packs, '' for 0. */
export function countryText(value: number): string {
  return value === 0 ? '' : String.fromCharCode(value >> 8, value & 0xff);
}

/**
 * Writes a bound into `out` at word `at` (1 word for IPv4: dotted or a
 * number; 4 for IPv6); false when the text is not one. Scanned by hand:
 * half a million lines are read at every start.
 */
function writeBound(text: string, width: 1 | 4, out: Uint32Array, at: number): boolean {
  if (width === 1) {
    const n = text.length > 0 && text.length <= 10 && !text.includes('.') ? Number(text) : ipv4Number(text);
    if (!(Number.isInteger(n) && n >= 0 && n <= 0xffffffff)) return false;
    out[at] = n;
    return true;
  }
  if (text.includes('.')) {
    const key = addressKey(text);
    if (!key || !('v6' in key)) return false;
    out.set(key.v6, at);
    return true;
  }
  const [head = '', tail, extra] = text.split('::');
  if (extra !== undefined) return false;
  const left = head ? head.split(':') : [];
  const right = tail ? tail.split(':') : [];
  const missing = 8 - left.length - right.length;
  if (missing < 0 || (tail === undefined && missing !== 0)) return false;
  const groups = [...left, ...Array<string>(missing).fill('0'), ...right];
  for (let i = 0; i < 4; i++) {
    const hi = groups[2 * i]!;
    const lo = groups[2 * i + 1]!;
    if (!/^[0-9a-fA-F]{1,4}$/.test(hi) || !/^[0-9a-fA-F]{1,4}$/.test(lo)) return false;
    out[at + i] = ((parseInt(hi, 16) << 16) | parseInt(lo, 16)) >>> 0;
  }
  return true;
}

function parseRanges(csv: string, width: 1 | 4, valueOf: (field: string) => number, names?: Map<number, string>): ParsedRanges {
  let lines = 0;
  for (let i = csv.indexOf('\n'); i !== -1; i = csv.indexOf('\n', i + 1)) lines++;
  lines++;
  const first = new Uint32Array(lines * width);
  const last = new Uint32Array(lines * width);
  const values = new Uint32Array(lines);
  let n = 0;
  let skipped = 0;
  for (let pos = 0; pos < csv.length; ) {
    let end = csv.indexOf('\n', pos);
    if (end === -1) end = csv.length;
    const c1 = csv.indexOf(',', pos);
    const c2 = c1 === -1 ? -1 : csv.indexOf(',', c1 + 1);
    const c3 = c2 === -1 ? -1 : csv.indexOf(',', c2 + 1);
    const fieldsEnd = c3 === -1 || c3 > end ? end : c3;
    const value = c2 === -1 || c2 > end ? 0 : valueOf(csv.slice(c2 + 1, fieldsEnd).trim());
    if (c2 !== -1 && c2 < end && value > 0 && writeBound(csv.slice(pos, c1), width, first, n * width) && writeBound(csv.slice(c1 + 1, c2), width, last, n * width)) {
      values[n] = value;
      if (names && !names.has(value)) names.set(value, fieldsEnd < end ? unquoted(csv.slice(fieldsEnd + 1, end)) : '');
      n++;
    } else if (end > pos) skipped++;
    pos = end + 1;
  }
  return { first: first.slice(0, n * width), last: last.slice(0, n * width), values: values.slice(0, n), skipped };
}
/** A CSV field: quotes around it dropped, doubled quotes inside made one. */
function unquoted(field: string): string {
  const text = field.trim();
  return text.startsWith('"') && text.endsWith('"') && text.length >= 2 ? text.slice(1, -1).replace(/""/g, '"') : text;
}
