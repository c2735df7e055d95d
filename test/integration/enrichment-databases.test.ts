import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadCountryDatabase, loadDatabases, packagedAsCsv, type CountryDatabase, type LoadedDatabases, type RangeCache } from '../../application/enrichment/database-files';
import { packagedCountryMmdb } from '../support/packaged-mmdb';

/**
 * The packaged address databases as the service reads them, checked against
 * tools no one here wrote: Debian's `mmdblookup` (libmaxminddb) on the MMDB
 * twin of the packaged country CSV (the same release), which the operator's
 * MMDB reader is checked against too, and the AS CSV read by a plain linear scan. Addresses are
 * random, half of them inside a random range of the CSV so that most hit.
 */
let dbs: LoadedDatabases;
let mmdbReader: CountryDatabase;
beforeAll(async () => {
  dbs = await loadDatabases({});
  mmdbReader = await loadCountryDatabase(packagedCountryMmdb());
}, 120_000);

/** A deterministic generator, so a failure names addresses that fail again. */
function random(seed: number) {
  let s = seed >>> 0;
  return () => ((s = (Math.imul(s, 1664525) + 1013904223) >>> 0) / 2 ** 32);
}

const ipv4 = (n: number) => [n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255].join('.');
const ipv6 = (n: bigint) => n.toString(16).padStart(32, '0').match(/.{4}/g)!.join(':');

interface CsvRange<T> {
  first: T;
  last: T;
  asn: number;
}

function csvRanges<T>(file: string, parse: (s: string) => T): Array<CsvRange<T>> {
  return fs
    .readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => {
      const [a = '', b = '', n = ''] = line.split(',');
      return { first: parse(a), last: parse(b), asn: Number(n) };
    });
}

/** The AS of an address by reading every range; where two overlap, the later (narrower) one, as the table answers. */
function linearScan<T>(ranges: ReadonlyArray<CsvRange<T>>, ip: T): number {
  let asn = 0;
  for (const r of ranges) if (r.first <= ip && ip <= r.last) asn = r.asn;
  return asn;
}

function sampleAddresses<T>(ranges: ReadonlyArray<CsvRange<T>>, count: number, anywhere: () => T, inside: (r: CsvRange<T>) => T, next: () => number): T[] {
  return Array.from({ length: count }, (_, i) => (i % 2 === 0 ? anywhere() : inside(ranges[Math.floor(next() * ranges.length)]!)));
}

/**
 * The countries mmdblookup answers for these addresses, in order: one bash loop runs it once an
 * address (a fork of bash per lookup, not of this test's process: minutes became seconds).
 * Exit status 6 with "Could not find an entry" is the file's answer for an unknown address.
 */
async function mmdbCountries(ips: readonly string[], file = packagedCountryMmdb()): Promise<string[]> {
  const loop = 'while read -r ip; do out=$(mmdblookup --file "$1" --ip "$ip" country_code 2>&1); code=$?; printf "%s\\n@@%s\\n" "$out" "$code"; done';
  const child = spawn('bash', ['-c', loop, 'mmdb', file], { stdio: ['pipe', 'pipe', 'inherit'] });
  let stdout = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  const done = new Promise<number | null>((resolve) => child.on('close', resolve));
  child.stdin.end(ips.join('\n') + '\n');
  expect(await done).toBe(0);
  const answers = stdout.split(/^@@(\d+)$\n?/m);
  return ips.map((ip, i) => {
    const [out, code] = [answers[2 * i]!, answers[2 * i + 1]];
    if (code !== '0' && !/Could not find an entry|IPv6 address in an IPv4-only database/.test(out)) throw new Error(`mmdblookup ${ip} exited ${code}: ${out}`);
    return /"([A-Za-z]{2})"/.exec(out)?.[1] ?? '';
  });
}

const mmdbCountry = async (ip: string, file = packagedCountryMmdb()): Promise<string> => (await mmdbCountries([ip], file))[0]!;

describe('the packaged address databases', () => {
  test('IPv4 AS numbers agree with a linear scan of the CSV on random addresses', () => {
    const next = random(4);
    const ranges = csvRanges(packagedAsCsv().v4, Number);
    const span = (r: CsvRange<number>) => r.first + Math.floor(next() * (r.last - r.first + 1));
    const addresses = sampleAddresses(ranges, 400, () => Math.floor(next() * 2 ** 32), span, next);
    const wrong = addresses.map(ipv4).filter((ip, i) => dbs.asOf(ip) !== linearScan(ranges, addresses[i]!));
    expect(wrong).toEqual([]);
    expect(addresses.filter((a) => linearScan(ranges, a) > 0).length).toBeGreaterThanOrEqual(200);
  });

  test('IPv6 AS numbers agree with a linear scan of the CSV on random addresses', () => {
    const next = random(6);
    const bits = () => BigInt(Math.floor(next() * 2 ** 32));
    const any = () => (bits() << 96n) | (bits() << 64n) | (bits() << 32n) | bits();
    const ranges = csvRanges(packagedAsCsv().v6.replace(/asn-ipv6\.csv$/, 'asn-ipv6-num.csv'), BigInt);
    const span = (r: CsvRange<bigint>) => r.first + (any() % (r.last - r.first + 1n));
    // Global unicast (2000::/3) for the addresses anywhere, or nearly none would hit.
    const addresses = sampleAddresses(ranges, 400, () => (any() & ((1n << 125n) - 1n)) | (1n << 125n), span, next);
    const wrong = addresses.map(ipv6).filter((ip, i) => dbs.asOf(ip) !== linearScan(ranges, addresses[i]!));
    expect(wrong).toEqual([]);
    expect(addresses.filter((a) => linearScan(ranges, a) > 0).length).toBeGreaterThanOrEqual(200);
  });

  /** A thousand random IPv4 addresses and a thousand IPv6 ones, where allocations lie. */
  function countryAddresses(): string[] {
    const next = random(8);
    const v4 = Array.from({ length: 1000 }, () => ipv4(Math.floor(next() * 2 ** 32)));
    const word = () => Math.floor(next() * 65536).toString(16);
    // Global unicast, and half of it under 2001::/16 and 2a00::/12 where most allocations lie.
    const v6 = Array.from({ length: 1000 }, (_, i) => [i % 3 === 0 ? '2001' : i % 3 === 1 ? `2a0${(i % 10).toString(16)}` : (0x2000 + Math.floor(next() * 0x2000)).toString(16), ...Array.from({ length: 7 }, word)].join(':'));
    return [...v4, ...v6];
  }

  /** The addresses where a lookup and mmdblookup on the MMDB twin disagree, each as "ip: ours != theirs". */
  async function disagreements(countryOf: (ip: string) => string): Promise<{ wrong: string[]; known: number }> {
    const ips = countryAddresses();
    const answers = (await mmdbCountries(ips)).map((a) => a.toUpperCase());
    const wrong = ips.flatMap((ip, i) => (countryOf(ip) === answers[i] ? [] : [`${ip}: ${countryOf(ip)} != ${answers[i]}`]));
    return { wrong, known: answers.filter(Boolean).length };
  }

  test('the packaged countries (a range table of the CSV) agree with mmdblookup on the same release as MMDB, for two thousand random IPv4 and IPv6 addresses', async () => {
    const { wrong, known } = await disagreements((ip) => dbs.countryOf(ip));
    expect(wrong).toEqual([]);
    expect(known).toBeGreaterThan(600);
  }, 600_000);

  test('an operator\'s country MMDB, read by the MMDB reader, agrees with mmdblookup on the same file for the same addresses', async () => {
    const { wrong, known } = await disagreements((ip) => mmdbReader.countryOf(ip));
    expect(wrong).toEqual([]);
    expect(known).toBeGreaterThan(600);
  }, 600_000);

  test('an IPv6 address in an IPv4-only file has no country, as mmdblookup refuses it, and IPv4 answers as it does', async () => {
    const file = packagedCountryMmdb().replace(/\.mmdb$/, '-ipv4.mmdb');
    const ipv4Only = await loadCountryDatabase(file);
    for (const ip of ['2001:4860:4860::8844', '2001:db8::1', '8.8.8.8', '1.1.1.1', '::ffff:8.8.8.8']) {
      expect([ip, ipv4Only.countryOf(ip)]).toEqual([ip, (await mmdbCountry(ip.replace('::ffff:', ''), file)).toUpperCase()]);
    }
    expect(ipv4Only.countryOf('2001:4860:4860::8844')).toBe('');
  });
});

describe('the packaged tables kept between starts', () => {
  /** A cache in a folder of its own that records what became of each look. */
  function cacheIn(dir: string): RangeCache & { results: string[] } {
    const results: string[] = [];
    return { dir, results, outcome: (result) => results.push(result) };
  }
  const sample = () => {
    const next = random(12);
    return [...Array.from({ length: 2000 }, () => ipv4(Math.floor(next() * 2 ** 32))), ...Array.from({ length: 500 }, () => ipv6((BigInt(Math.floor(next() * 2 ** 32)) << 96n) | (1n << 125n)))];
  };

  test('a second load reads both tables back from the cache and answers every address as the parsed CSVs do', async () => {
    const cache = cacheIn(fs.mkdtempSync(path.join(os.tmpdir(), 'nettel-ranges-')));
    await loadDatabases({}, cache);
    const again = await loadDatabases({}, cache);
    expect(cache.results).toEqual(['miss', 'miss', 'hit', 'hit']);
    const ips = sample();
    expect(ips.filter((ip) => again.asOf(ip) !== dbs.asOf(ip) || again.countryOf(ip) !== dbs.countryOf(ip))).toEqual([]);
    expect(ips.filter((ip) => again.asOf(ip) > 0).length).toBeGreaterThan(500);
    expect(again.asNames).toEqual(dbs.asNames);
    expect([again.asDb, again.countryDb, again.version]).toEqual([dbs.asDb, dbs.countryDb, dbs.version]);
    fs.rmSync(cache.dir, { recursive: true });
  }, 120_000);

  test('a damaged table in the cache is refused, the CSV parsed instead and the table written anew', async () => {
    const cache = cacheIn(fs.mkdtempSync(path.join(os.tmpdir(), 'nettel-ranges-')));
    await loadDatabases({}, cache);
    const [asFile] = fs.readdirSync(cache.dir).filter((f) => f.startsWith('as-'));
    const bytes = fs.readFileSync(path.join(cache.dir, asFile!));
    bytes[bytes.length - 100]! ^= 0xff;
    fs.writeFileSync(path.join(cache.dir, asFile!), bytes);
    const reparsed = await loadDatabases({}, cache);
    await loadDatabases({}, cache);
    expect(cache.results).toEqual(['miss', 'miss', 'hit', 'refused', 'hit', 'hit']);
    expect(sample().filter((ip) => reparsed.asOf(ip) !== dbs.asOf(ip))).toEqual([]);
    fs.rmSync(cache.dir, { recursive: true });
  }, 120_000);

  test('a cache folder that cannot be written leaves the tables parsed from the CSVs, reported as unwritable', async () => {
    const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'nettel-ranges-')), 'not-a-folder');
    fs.writeFileSync(file, '');
    const cache = cacheIn(file);
    const loaded = await loadDatabases({}, cache);
    expect(cache.results).toEqual(['unreadable', 'unwritable', 'unreadable', 'unwritable']);
    expect(loaded.asOf('1.1.1.1')).toBe(dbs.asOf('1.1.1.1'));
  }, 120_000);
});
