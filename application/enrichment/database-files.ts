import { createHash } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { Reader, type Response } from 'maxmind';
import type { AddressKey } from '../../core/enrichment/address-key';
import { AddressRanges, countryText } from '../../core/enrichment/address-ranges';
import { decodeRangeTable, encodeRangeTable } from '../../core/enrichment/range-table-file';
import { asOfRecord, countryOfRecord, type AddressDatabases } from '../../core/enrichment/flow-enrichment';
import { dropOldest } from '../../core/bounded-map';

/**
 * The address databases' files: the CSVs shipped in npm packages
 * (`@ip-location-db/geo-whois-asn-country` for countries, `@ip-location-db/asn`
 * for AS numbers and names), read into range tables, or the operator's own
 * MMDB files (MaxMind or IPinfo, country and ASN) named by settings. Each
 * file read whole into memory: a lookup never touches the disk. The packaged
 * countries are read from the CSV, not the package's MMDB twin: a bisection
 * over the parsed address costs what an AS lookup costs, a tree walk from the
 * address text three to five times that (bench/results/2026-11-29-enrichment.md).
 */
export interface DatabaseFiles {
  /** An MMDB file with countries; the package's CSV by default. */
  countryMmdb?: string;
  /** An MMDB file with AS numbers; the package's CSV by default. */
  asnMmdb?: string;
}

const packageDir = (name: string) => path.dirname(require.resolve(`${name}/package.json`));
const countryPackage = '@ip-location-db/geo-whois-asn-country';
const asPackage = '@ip-location-db/asn';

export const packagedCountryCsv = () => ({ v4: path.join(packageDir(countryPackage), 'geo-whois-asn-country-ipv4-num.csv'), v6: path.join(packageDir(countryPackage), 'geo-whois-asn-country-ipv6.csv') });
export const packagedAsCsv = () => ({ v4: path.join(packageDir(asPackage), 'asn-ipv4-num.csv'), v6: path.join(packageDir(asPackage), 'asn-ipv6.csv') });

async function packageVersion(name: string): Promise<string> {
  const json = JSON.parse(await fs.readFile(path.join(packageDir(name), 'package.json'), 'utf8')) as { version?: string };
  return `${name}@${json.version ?? 'unknown'}`;
}

/** An operator's file named by its content, so the same bytes under a new time are the same version. */
const fileVersion = (file: string, bytes: Buffer) => `${path.basename(file)} sha256:${createHash('sha256').update(bytes).digest('hex').slice(0, 16)}`;

/** A file's stamp: its path, size and modification time; a change of any means a reload. */
const stampOf = async (paths: readonly string[]) =>
  (await Promise.all(paths.map(async (p) => fs.stat(p).then((st) => `${p}:${st.size}:${st.mtimeMs}`)))).join('|');

/** The stamps of the country file and of the AS file(s), apart: a change to one reloads that one alone. */
export async function fileStamps(files: DatabaseFiles): Promise<{ country: string; as: string }> {
  return {
    country: await stampOf(files.countryMmdb ? [files.countryMmdb] : Object.values(packagedCountryCsv())),
    as: await stampOf(files.asnMmdb ? [files.asnMmdb] : Object.values(packagedAsCsv())),
  };
}

/**
 * The databases this process loaded, by kind and file stamp: every AddressEnrichment of one
 * process shares one copy (one enrichment in production; one per stack in the tests, which start
 * many stacks in one process and held a copy, about 160 MB and 2 s of loading, for each). A changed
 * file has a new stamp and loads anew; the oldest entries are forgotten beyond a few.
 */
const loadedByStamp = new Map<string, Promise<unknown>>();
export function loadShared<T>(kind: 'country' | 'as', stamp: string, load: () => Promise<T>): Promise<T> {
  const key = `${kind} ${stamp}`;
  const known = loadedByStamp.get(key) as Promise<T> | undefined;
  if (known) return known;
  const loading = load();
  loadedByStamp.set(key, loading);
  loading.catch(() => loadedByStamp.delete(key));
  dropOldest(loadedByStamp, 4);
  return loading;
}

/** One database loaded: its lookup and what it is. */
export interface CountryDatabase {
  db: string;
  countryOf: (address: string, key?: AddressKey) => string;
}
export interface AsDatabase {
  db: string;
  asOf: (address: string, key?: AddressKey) => number;
  /** AS names from the CSV, for the `as_names` table; empty with an operator's ASN MMDB. */
  names: ReadonlyMap<number, string>;
}

/** The databases loaded: lookups over memory, and what each one is. */
export interface LoadedDatabases extends AddressDatabases {
  countryDb: string;
  asDb: string;
  asNames: ReadonlyMap<number, string>;
}

/** The id of a pair of databases: a hash of their names, the same in every process. */
export const versionIdOf = (countryDb: string, asDb: string) =>
  createHash('sha256').update(`${countryDb}\u0000${asDb}`).digest().readUInt32BE(0) || 1;

/**
 * Decoded records by their offset in the file, for the reader: a country
 * file holds a few hundred distinct records, so decoding each once takes
 * the decoder off the hot path. Bounded, in case a file holds many more.
 */
function recordCache(max = 100_000) {
  const map = new Map<number, unknown>();
  return {
    get: (key: string | number) => map.get(Number(key)),
    set: (key: string | number, value: unknown) => {
      if (map.size >= max) map.clear();
      map.set(Number(key), value);
    },
  };
}

const readerOf = (bytes: Buffer) => new Reader<Response>(bytes, { cache: recordCache() });

/**
 * An address's record in an MMDB reader, or null. An IPv4-mapped address is
 * looked up as its IPv4 address (the packaged file keeps IPv4 apart from
 * ::ffff:0:0/96); an IPv6 address in an IPv4-only file has none, as
 * libmaxminddb says (the npm reader would answer an IPv4 entry instead).
 */
function recordOf(reader: Reader<Response>, address: string): Response | null {
  const mapped = address.startsWith('::ffff:') && address.includes('.');
  if (address.includes(':') && !mapped && reader.metadata.ipVersion === 4) return null;
  return reader.get(mapped ? address.slice(7) : address);
}

/**
 * Where the packaged CSVs' parsed tables are kept between starts (ENRICHMENT_CACHE_DIR), and what
 * became of each look there: `hit` read back, `miss` parsed and written, `refused` a file that was
 * not the table asked for (parsed and written again), `unreadable`/`unwritable` the folder failing
 * (the CSV parsed all the same).
 */
export interface RangeCache {
  dir: string;
  outcome(result: 'hit' | 'miss' | 'refused' | 'unreadable' | 'unwritable', detail?: string): void;
}

/** The range table of a packaged CSV pair: read back from the cache when it holds this very version, else parsed (and kept there). */
async function packagedRanges(kind: 'country' | 'as', csv: { v4: string; v6: string }, db: string, parse: (v4: string, v6: string) => AddressRanges, cache?: RangeCache): Promise<AddressRanges> {
  const parseCsv = async () => parse(await fs.readFile(csv.v4, 'utf8'), await fs.readFile(csv.v6, 'utf8'));
  if (!cache) return parseCsv();
  const source = `range-table 1 ${kind} ${db} ${await stampOf([csv.v4, csv.v6])}`;
  const file = path.join(cache.dir, `${kind}-${createHash('sha256').update(source).digest('hex').slice(0, 16)}.ranges`);
  const bytes = await fs.readFile(file).catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT') cache.outcome('miss');
    else cache.outcome('unreadable', err.message);
    return undefined;
  });
  if (bytes) {
    const decoded = decodeRangeTable(bytes, source);
    if ('ranges' in decoded) {
      cache.outcome('hit');
      return decoded.ranges;
    }
    cache.outcome('refused', `${file}: ${decoded.refused}`);
  }
  const ranges = await parseCsv();
  // Written beside and renamed into place: a process reading it meanwhile sees the old file or the whole new one.
  const partial = `${file}.${process.pid}.${Date.now()}.partial`;
  try {
    await fs.mkdir(cache.dir, { recursive: true });
    await fs.writeFile(partial, encodeRangeTable(source, ranges));
    await fs.rename(partial, file);
  } catch (err) {
    cache.outcome('unwritable', (err as Error).message);
    // A partial file left by a write cut short; where the folder itself failed there is none to remove (that error is the one reported).
    await fs.rm(partial, { force: true }).catch(() => undefined);
  }
  return ranges;
}

/** Reads the operator's country MMDB, or the packaged CSV into a range table. Throws when it cannot be read or is not a database. */
export async function loadCountryDatabase(file: string | undefined, cache?: RangeCache): Promise<CountryDatabase> {
  if (!file) {
    const db = await packageVersion(countryPackage);
    const ranges = await packagedRanges('country', packagedCountryCsv(), db, (v4, v6) => AddressRanges.fromCountryCsv(v4, v6), cache);
    return { db, countryOf: (address, key) => countryText(ranges.lookup(key ?? address)) };
  }
  const bytes = await fs.readFile(file);
  const reader = readerOf(bytes);
  const seen = new Map<string, string>();
  return {
    db: fileVersion(file, bytes),
    countryOf: (address) => {
      // Flows repeat addresses (their top talkers most): a hit costs a map read instead of a tree walk.
      let code = seen.get(address);
      if (code === undefined) {
        code = countryOfRecord(recordOf(reader, address));
        if (seen.size >= 200_000) seen.clear();
        seen.set(address, code);
      }
      return code;
    },
  };
}

/** Reads the operator's ASN MMDB, or the packaged CSV into a range table. */
export async function loadAsDatabase(file: string | undefined, cache?: RangeCache): Promise<AsDatabase> {
  if (file) {
    const bytes = await fs.readFile(file);
    const reader = readerOf(bytes);
    return { db: fileVersion(file, bytes), asOf: (address) => asOfRecord(recordOf(reader, address)), names: new Map() };
  }
  const db = await packageVersion(asPackage);
  const ranges = await packagedRanges('as', packagedAsCsv(), db, (v4, v6) => AddressRanges.fromAsCsv(v4, v6), cache);
  return { db, asOf: (address, key) => ranges.lookup(key ?? address), names: ranges.names };
}

/** A country and an AS database as one version. */
export function combined(country: CountryDatabase, as: AsDatabase): LoadedDatabases {
  return {
    version: versionIdOf(country.db, as.db),
    countryDb: country.db,
    asDb: as.db,
    asNames: as.names,
    asOf: as.asOf,
    countryOf: country.countryOf,
  };
}

/** Both databases the files name (the packaged ones for those not named). */
export async function loadDatabases(files: DatabaseFiles, cache?: RangeCache): Promise<LoadedDatabases> {
  return combined(await loadCountryDatabase(files.countryMmdb, cache), await loadAsDatabase(files.asnMmdb, cache));
}
