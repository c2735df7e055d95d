import { createHash } from 'node:crypto';
import { AddressRanges, type RangeTables } from './address-ranges';

/**
 * A range table in a file, so a process reads the arrays back in milliseconds
 * instead of parsing half a million CSV lines again (0.5-2.5 s of CPU at every
 * start: each test file paid it, and so does every restart of a role that
 * ingests flows). The file is a cache the process wrote itself, but it is read
 * as input like any other: a wrong magic, a source other than the one asked
 * for, a length that does not add up, a checksum that does not match or
 * bounds out of order make it refused, and the caller parses the CSV instead.
 *
 * Layout: `NTRANGE1`, the header's length (u32 little-endian), the header
 * (JSON: source, counts, names' length, SHA-256 of the body), zero padding to
 * a multiple of 4, then the body: the six arrays as little-endian words and
 * the AS names as JSON pairs.
 */
const magic = Buffer.from('NTRANGE1', 'latin1');
const arrayNames = ['v4First', 'v4Last', 'v4Values', 'v6First', 'v6Last', 'v6Values'] as const;

interface Header {
  source: string;
  v4: number;
  v6: number;
  namesBytes: number;
  sha256: string;
}

const littleEndian = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1;
const wordsOf = (h: Pick<Header, 'v4' | 'v6'>) => [h.v4, h.v4, h.v4, h.v6 * 4, h.v6 * 4, h.v6];

/** The file's bytes for a table made from `source` (a stamp of the files it was parsed from). */
export function encodeRangeTable(source: string, ranges: AddressRanges): Buffer {
  const t = ranges.tables;
  const arrays = arrayNames.map((name) => Buffer.from(t[name].buffer, t[name].byteOffset, t[name].byteLength));
  const names = Buffer.from(JSON.stringify([...ranges.names]), 'utf8');
  const body = Buffer.concat([...arrays, names]);
  const header: Header = { source, v4: t.v4Values.length, v6: t.v6Values.length, namesBytes: names.length, sha256: createHash('sha256').update(body).digest('hex') };
  const headerBytes = Buffer.from(JSON.stringify(header), 'utf8');
  const length = Buffer.alloc(4);
  length.writeUInt32LE(headerBytes.length);
  const padding = Buffer.alloc((4 - ((magic.length + 4 + headerBytes.length) % 4)) % 4);
  return Buffer.concat([magic, length, headerBytes, padding, body]);
}

export type DecodedRangeTable = { ranges: AddressRanges } | { refused: string };

/** The table a file holds, when it is one made from `source` and intact. */
export function decodeRangeTable(bytes: Buffer, source: string): DecodedRangeTable {
  if (!littleEndian) return { refused: 'this machine is not little-endian' };
  if (bytes.length < magic.length + 4 || !bytes.subarray(0, magic.length).equals(magic)) return { refused: 'not a range table file' };
  const headerLength = bytes.readUInt32LE(magic.length);
  const headerEnd = magic.length + 4 + headerLength;
  if (headerEnd > bytes.length) return { refused: 'header cut short' };
  const header = headerOf(bytes.subarray(magic.length + 4, headerEnd));
  if (!header) return { refused: 'header is not one' };
  if (header.source !== source) return { refused: 'made from other files' };
  const bodyStart = headerEnd + ((4 - (headerEnd % 4)) % 4);
  const words = wordsOf(header);
  const arrayBytes = words.reduce((sum, n) => sum + n * 4, 0);
  if (bodyStart + arrayBytes + header.namesBytes !== bytes.length) return { refused: 'length does not match its header' };
  const body = bytes.subarray(bodyStart);
  if (createHash('sha256').update(body).digest('hex') !== header.sha256) return { refused: 'checksum does not match' };
  // Copied into arrays of their own: aligned whatever the buffer's offset, and the file's buffer can go.
  const tables = {} as RangeTables;
  let at = 0;
  arrayNames.forEach((name, i) => {
    const length = words[i]! * 4;
    tables[name] = new Uint32Array(Uint8Array.prototype.slice.call(body, at, at + length).buffer);
    at += length;
  });
  const names = namesOf(body.subarray(at).toString('utf8'));
  if (!names) return { refused: 'names are not pairs of a number and a text' };
  if (!inOrder(tables.v4First, tables.v4Last, 1) || !inOrder(tables.v6First, tables.v6Last, 4)) return { refused: 'ranges out of order' };
  return { ranges: AddressRanges.fromTables(tables, names) };
}

function headerOf(bytes: Buffer): Header | undefined {
  try {
    const h = JSON.parse(bytes.toString('utf8')) as Partial<Header>;
    const count = (n: unknown): n is number => Number.isSafeInteger(n) && (n as number) >= 0;
    if (typeof h.source !== 'string' || typeof h.sha256 !== 'string' || !count(h.v4) || !count(h.v6) || !count(h.namesBytes)) return undefined;
    return h as Header;
  } catch {
    return undefined;
  }
}

function namesOf(text: string): Map<number, string> | undefined {
  try {
    const pairs = JSON.parse(text) as unknown;
    if (!Array.isArray(pairs)) return undefined;
    const names = new Map<number, string>();
    for (const pair of pairs) {
      if (!Array.isArray(pair) || !Number.isSafeInteger(pair[0]) || typeof pair[1] !== 'string') return undefined;
      names.set(pair[0] as number, pair[1]);
    }
    return names;
  } catch {
    return undefined;
  }
}

/** Each range's first bound at or below its last and not below the previous range's first: what the bisection relies on (the CSVs nest a few ranges). */
function inOrder(first: Uint32Array, last: Uint32Array, width: 1 | 4): boolean {
  const compare = (a: Uint32Array, i: number, b: Uint32Array, j: number) => {
    for (let w = 0; w < width; w++) {
      const d = a[i * width + w]! - b[j * width + w]!;
      if (d !== 0) return d;
    }
    return 0;
  };
  const count = first.length / width;
  for (let i = 0; i < count; i++) {
    if (compare(first, i, last, i) > 0) return false;
    if (i > 0 && compare(first, i, first, i - 1) < 0) return false;
  }
  return true;
}
