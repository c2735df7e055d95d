import { createHash } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { Reader, type Response } from 'maxmind';
import { AsRanges } from '../../core/enrichment/as-ranges';
import { asOfRecord, countryOfRecord, type AddressDatabases } from '../../core/enrichment/flow-enrichment';

/**
 * The address databases' files: the ones shipped in npm packages
 * (`@ip-location-db/geo-whois-asn-country-mmdb` for countries,
 * `@ip-location-db/asn` for AS numbers and names), or the operator's own
 * MMDB files (MaxMind or IPinfo, country and ASN) named by settings. Each
 * file read whole into memory: a lookup never touches the disk.
 */
export interface DatabaseFiles {
  /** An MMDB file with countries; the package's by default. */
  countryMmdb?: string;
  /** An MMDB file with AS numbers; the package's CSV by default. */
  asnMmdb?: string;
}

const packageDir = (name: string) => path.dirname(require.resolve(`${name}/package.json`));
const countryPackage = '@ip-location-db/geo-whois-asn-country-mmdb';
const asPackage = '@ip-location-db/asn';

export const packagedCountryMmdb = () => path.join(packageDir(countryPackage), 'geo-whois-asn-country.mmdb');
export const packagedAsCsv = () => ({ v4: path.join(packageDir(asPackage), 'asn-ipv4-num.csv'), v6: path.join(packageDir(asPackage), 'asn-ipv6.csv') });

async function packageVersion(name: string): Promise<string> {
  const json = JSON.parse(await fs.readFile(path.join(packageDir(name), 'package.json'), 'utf8')) as { version?: string };
  return `${name}@${json.version ?? 'unknown'}`;
}

/** An operator's file named by its content, so the same bytes under a new time are the same version. */
const fileVersion = (file: string, bytes: Buffer) => `${path.basename(file)} sha256:${createHash('sha256').update(bytes).digest('hex').slice(0, 16)}`;

/** The files whose change means a reload: their paths, sizes and modification times. */
export async function fileStamp(files: DatabaseFiles): Promise<string> {
  const paths = [files.countryMmdb ?? packagedCountryMmdb(), ...(files.asnMmdb ? [files.asnMmdb] : Object.values(packagedAsCsv()))];
  const stats = await Promise.all(paths.map(async (p) => fs.stat(p).then((s) => `${p}:${s.size}:${s.mtimeMs}`)));
  return stats.join('|');
}

/** The databases loaded: lookups over memory, and what each one is. */
export interface LoadedDatabases extends AddressDatabases {
  countryDb: string;
  asDb: string;
  /** AS names from the CSV, for the `as_names` table; empty with an operator's ASN MMDB. */
  asNames: ReadonlyMap<number, string>;
}

/** The id of a pair of databases: a hash of their names, the same in every process. */
export const versionIdOf = (countryDb: string, asDb: string) =>
  createHash('sha256').update(`${countryDb}\u0000${asDb}`).digest().readUInt32BE(0) || 1;

/** Reads the files named (the packaged ones for those not named) and builds the lookups. Throws when a file cannot be read or is not a database. */
export async function loadDatabases(files: DatabaseFiles): Promise<LoadedDatabases> {
  const countryFile = files.countryMmdb ?? packagedCountryMmdb();
  const countryBytes = await fs.readFile(countryFile);
  const country = new Reader<Response>(countryBytes);
  const countryDb = files.countryMmdb ? fileVersion(countryFile, countryBytes) : await packageVersion(countryPackage);
  let asOf: (address: string) => number;
  let asDb: string;
  let asNames: ReadonlyMap<number, string> = new Map();
  if (files.asnMmdb) {
    const bytes = await fs.readFile(files.asnMmdb);
    const reader = new Reader<Response>(bytes);
    asOf = (address) => asOfRecord(reader.get(address));
    asDb = fileVersion(files.asnMmdb, bytes);
  } else {
    const csv = packagedAsCsv();
    const ranges = AsRanges.fromCsv(await fs.readFile(csv.v4, 'utf8'), await fs.readFile(csv.v6, 'utf8'));
    asOf = (address) => ranges.lookup(address);
    asDb = await packageVersion(asPackage);
    asNames = ranges.names;
  }
  return {
    version: versionIdOf(countryDb, asDb),
    countryDb,
    asDb,
    asNames,
    asOf,
    // An IPv4-mapped address is looked up as the IPv4 address: the packaged file keeps IPv4 apart from ::ffff:0:0/96.
    countryOf: (address) => countryOfRecord(country.get(address.startsWith('::ffff:') && address.includes('.') ? address.slice(7) : address)),
  };
}
