import { addressKey } from '../../core/enrichment/address-key';
import { ipv4Number } from '../../core/ipv4-text';
import { AddressRanges, countryText, countryValue } from '../../core/enrichment/address-ranges';
import { applyEnrichment, asOfRecord, countryOfRecord, enrichmentOf, type AddressDatabases } from '../../core/enrichment/flow-enrichment';
import { hasRowsOf, rowShapeOf } from '../../core/row-shape';
import { NetworkTable, type Network } from '../../core/enrichment/networks';
import { flowRowFields, flowRowJson, toFlowRow } from '../../core/flow';
import { addressBytes, parseFilters } from '../../core/flow-query';

const v4Csv = ['1.0.0.0,1.0.0.255,13335,"Cloudflare, Inc."', '1.0.4.0,1.0.7.255,38803,Gtelecom Pty Ltd', '16778240,16779263,38803,Gtelecom Pty Ltd', 'not,a,range', ''].join('\n');
const v6Csv = ['2001::,2001::ffff:ffff:ffff:ffff:ffff:ffff,6939,Hurricane Electric LLC', '2001:200::,2001:200:1b9:ffff:ffff:ffff:ffff:ffff,2500,WIDE "Project"'].join('\n');

describe('address keys', () => {
  test('an IPv4-mapped IPv6 address is looked up as the IPv4 address it maps', () => {
    expect(addressKey('::ffff:1.2.3.4')).toEqual({ v4: 0x01020304 });
    expect(addressKey('2001:db8::1')).toEqual({ v6: Uint32Array.from([0x20010db8, 0, 0, 1]) });
  });
});

describe('the AS range table', () => {
  const table = AddressRanges.fromAsCsv(v4Csv, v6Csv);

  test('finds the range holding an address, at its bounds and inside, and 0 between ranges', () => {
    expect(table.lookup('1.0.0.0')).toBe(13335);
    expect(table.lookup('1.0.0.255')).toBe(13335);
    expect(table.lookup('1.0.1.0')).toBe(0);
    expect(table.lookup('1.0.5.9')).toBe(38803);
    expect(table.lookup('0.255.255.255')).toBe(0);
    expect(table.lookup('2001::1')).toBe(6939);
    expect(table.lookup('2001:200:1b9:ffff::1')).toBe(2500);
    expect(table.lookup('2001:200:1ba::')).toBe(0);
    expect(table.lookup('::ffff:1.0.0.7')).toBe(13335);
  });

  test('reads numeric and dotted bounds, skips what is not a range and keeps each AS name once, unquoted', () => {
    expect(table.size).toBe(5);
    expect(table.skipped).toBe(1);
    expect(table.names.get(13335)).toBe('Cloudflare, Inc.');
    expect(table.names.get(2500)).toBe('WIDE "Project"');
  });
  test('answers as a plain scan of every range for random addresses, ranges spanning /16 blocks and gaps included', () => {
    // Ranges of random lengths (some across many /16 blocks, some a single address) with gaps between.
    const ranges: Array<[number, number, number]> = [];
    let random = 7;
    const next = () => (random = (Math.imul(random, 1_103_515_245) + 12_345) >>> 0);
    for (let at = 5; at < 0xffff_ff00 && ranges.length < 1500; ) {
      const length = next() % 4 === 0 ? next() % 0x40_0000 : next() % 600;
      const last = Math.min(at + length, 0xffff_fffe);
      ranges.push([at, last, (next() % 60_000) + 1]);
      at = last + 1 + (next() % 3 === 0 ? 0 : next() % 0x10_0000);
    }
    const wide = AddressRanges.fromAsCsv(ranges.map(([f, l, v]) => `${f},${l},${v},x`).join('\n'), '');
    const scan = (ip: number) => ranges.find(([f, l]) => f <= ip && ip <= l)?.[2] ?? 0;
    const probes = [0, 0xffff_ffff, ...ranges.flatMap(([f, l]) => [f - 1, f, l, l + 1].filter((ip) => ip >= 0 && ip <= 0xffff_ffff))];
    for (let i = 0; i < 5000; i++) probes.push(next());
    const wrong = probes.filter((ip) => wide.lookupV4(ip) !== scan(ip));
    expect(wrong).toEqual([]);
  });
  test('an IPv6 range spanning many /16 blocks holds the addresses of the blocks after its first', () => {
    const spanning = AddressRanges.fromAsCsv('', ['2001::,2003:ffff:ffff:ffff:ffff:ffff:ffff:ffff,64500,a', '2a00::,2a00::ff,64501,b'].join('\n'));
    expect(spanning.lookup('2002:abcd::1')).toBe(64500);
    expect(spanning.lookup('2003:ffff::')).toBe(64500);
    expect(spanning.lookup('2004::')).toBe(0);
    expect(spanning.lookup('2a00::100')).toBe(0);
    expect(spanning.lookup('2a00::80')).toBe(64501);
    expect(spanning.lookup('::1')).toBe(0);
  });
});

describe('the country range table', () => {
  const table = AddressRanges.fromCountryCsv(['16777216,16777471,AU', '16777472,16778239,cn', '16778240,16779263,A1', 'x,y,NL'].join('\n'), '2001:200::,2001:200:ffff:ffff:ffff:ffff:ffff:ffff,JP');

  test('answers the upper-case code of the range holding an address, and nothing between ranges', () => {
    expect(countryText(table.lookup('1.0.0.1'))).toBe('AU');
    expect(countryText(table.lookup('1.0.1.0'))).toBe('CN');
    expect(countryText(table.lookup('2001:200::5'))).toBe('JP');
    expect(countryText(table.lookup('1.0.16.0'))).toBe('');
  });

  test('skips a line whose code is not two letters, or whose bounds are not addresses', () => {
    expect(table.size).toBe(3);
    expect(table.skipped).toBe(2);
  });

  test('packs a code into a number and back, and refuses anything but two letters', () => {
    expect(countryText(countryValue('nl'))).toBe('NL');
    for (const bad of ['', 'N', 'NLD', '1A', 'É1']) expect(countryValue(bad)).toBe(0);
  });
});

describe('networks of a workspace', () => {
  const nets: Network[] = [
    { prefix: '10.0.0.0/8', name: 'corp', role: 'internal', site: '', tenant: '', tags: [] },
    { prefix: '10.1.0.0/16', name: 'dc1', role: 'servers', site: 'par1', tenant: 'acme', tags: ['prod'] },
    { prefix: '2001:db8::/32', name: 'v6', role: '', site: '', tenant: '', tags: [] },
  ];
  const table = new NetworkTable(nets);

  test('the most specific prefix holding an address labels it, in either family', () => {
    expect(table.lookup('10.1.2.3')?.name).toBe('dc1');
    expect(table.lookup('10.2.2.3')?.name).toBe('corp');
    expect(table.lookup('2001:db8:1::1')?.name).toBe('v6');
    expect(table.lookup('192.0.2.1')).toBeUndefined();
  });

  test('a default route (/0) labels what no longer prefix holds, and a host route (/32, /128) its one address', () => {
    const withDefaults = new NetworkTable([
      ...nets,
      { prefix: '0.0.0.0/0', name: 'v4-any', role: '', site: '', tenant: '', tags: [] },
      { prefix: '10.1.2.3/32', name: 'host', role: '', site: '', tenant: '', tags: [] },
      { prefix: '::/0', name: 'v6-any', role: '', site: '', tenant: '', tags: [] },
      { prefix: '2001:db8:0:1::/64', name: 'lan', role: '', site: '', tenant: '', tags: [] },
      { prefix: '2001:db8:0:1::7/128', name: 'v6-host', role: '', site: '', tenant: '', tags: [] },
    ]);
    expect(['192.0.2.1', '10.1.2.3', '10.1.2.4', '2001:db8:0:1::7', '2001:db8:0:1::8', '2001:db8:5::1', '2a00::1'].map((ip) => withDefaults.lookup(ip)?.name)).toEqual(['v4-any', 'host', 'dc1', 'v6-host', 'lan', 'v6', 'v6-any']);
  });

  test('a prefix written with host bits labels its whole network', () => {
    expect(new NetworkTable([{ prefix: '192.0.2.77/24', name: 'doc', role: '', site: '', tenant: '', tags: [] }]).lookup('192.0.2.1')?.name).toBe('doc');
  });

  test('ten thousand networks answer as a scan of every prefix, most specific first, for random addresses', () => {
    let s = 7;
    const next = () => ((s = (Math.imul(s, 1664525) + 1013904223) >>> 0) / 2 ** 32);
    // No prefix twice (the document refuses it): each network's first address and length once.
    const seen = new Set<string>();
    const many: Network[] = [];
    while (many.length < 10_000) {
      const length = 8 + Math.floor(next() * 25);
      const ip = [10, Math.floor(next() * 4), Math.floor(next() * 256), Math.floor(next() * 256)].join('.');
      const first = (ipv4Number(ip) & ((0xffffffff << (32 - length)) >>> 0)) >>> 0;
      if (seen.has(`${first}/${length}`)) continue;
      seen.add(`${first}/${length}`);
      many.push({ prefix: `${ip}/${length}`, name: `n${many.length}`, role: '', site: '', tenant: '', tags: [] });
    }
    const big = new NetworkTable(many);
    const parsed = many.map((n) => {
      const [a = '', l = ''] = n.prefix.split('/');
      const mask = (0xffffffff << (32 - Number(l))) >>> 0;
      return { name: n.name, length: Number(l), mask, first: (ipv4Number(a) & mask) >>> 0 };
    });
    const scan = (ip: number) => {
      let best: { name: string; length: number } | undefined;
      for (const n of parsed) if (((ip & n.mask) >>> 0) === n.first && (!best || n.length > best.length)) best = n;
      return best?.name;
    };
    const ips = Array.from({ length: 300 }, () => (10 * 2 ** 24 + Math.floor(next() * 4 * 2 ** 16)) >>> 0);
    const named = (ip: number) => [ip >>> 24, (ip >>> 16) & 255, (ip >>> 8) & 255, ip & 255].join('.');
    expect(ips.map((ip) => big.lookup(named(ip))?.name)).toEqual(ips.map(scan));
  });
});

describe('a flow enriched', () => {
  const dbs: AddressDatabases = { version: 7, asOf: (a) => (a.startsWith('1.') ? 13335 : 0), countryOf: (a) => (a.startsWith('1.') ? 'AU' : '') };

  test('an AS number the exporter sent wins over the database', () => {
    const e = enrichmentOf({ src_ip: '1.1.1.1', dst_ip: '1.0.0.1', src_as: 64500 }, dbs);
    expect(e).toEqual({ enrichment_version: 7, dst_as: 13335, src_country: 'AU', dst_country: 'AU' });
  });

  test('the workspace networks label the addresses inside them, and empty answers are left out', () => {
    const nets = new NetworkTable([{ prefix: '10.0.0.0/8', name: 'corp', role: 'internal', site: '', tenant: '', tags: [] }]);
    expect(enrichmentOf({ src_ip: '10.0.0.1', dst_ip: '192.0.2.1' }, dbs, nets)).toEqual({ enrichment_version: 7, src_net_name: 'corp', src_net_role: 'internal' });
  });

  test('the stored line with its enrichment is the row and the enrichment as one JSON object', () => {
    const input = { src_ip: '1.1.1.1', dst_ip: '10.0.0.1', bytes: 10, packets: 1, protocol: 'tcp', tcp_flags: 0x12 };
    const stamp = { org_id: 'org', event_id: 'e1', ts: 1_700_000_000_000, received_at: 1_700_000_000_000 };
    const e = enrichmentOf(input, dbs);
    const tail = applyEnrichment(input, e);
    expect(JSON.parse(flowRowJson(input, stamp, tail).json)).toEqual({ ...toFlowRow(input, stamp), ...e });
  });

  test("a stored line with every enrichment field passes the stream workers' row screen, the AS numbers in the row's own fields", () => {
    const nets = new NetworkTable([{ prefix: '10.0.0.0/8', name: 'corp', role: 'internal', site: 'par', tenant: 'shop', tags: [] }]);
    const input = { src_ip: '10.0.0.1', dst_ip: '10.0.0.2', bytes: 10, packets: 1, protocol: 'tcp', exporter: '192.0.2.1', tcp_flags: 2, sampling_rate: 10 };
    const stamp = { org_id: 'org', event_id: 'e1', ts: 1_700_000_000_000, received_at: 1_700_000_000_000 };
    const tail = applyEnrichment(input, enrichmentOf(input, dbs, nets));
    const line = flowRowJson(input, stamp, tail).json;
    expect(tail).not.toContain('_as"');
    expect(hasRowsOf(Buffer.from(`${line}\n`), 'org', rowShapeOf(flowRowFields))).toBe(true);
  });

  test('MMDB records of ip-location-db, MaxMind and IPinfo give their country and AS number', () => {
    expect(countryOfRecord({ country_code: 'US' })).toBe('US');
    expect(countryOfRecord({ country: { iso_code: 'DE' } })).toBe('DE');
    expect(countryOfRecord({ registered_country: { iso_code: 'FR' } })).toBe('FR');
    expect(countryOfRecord({ country: 'jp' })).toBe('JP');
    expect(countryOfRecord(null)).toBe('');
    expect(asOfRecord({ autonomous_system_number: 15169 })).toBe(15169);
    expect(asOfRecord({ asn: 'AS13335' })).toBe(13335);
    expect(asOfRecord({ asn: 'none' })).toBe(0);
  });
});

describe('enrichment dimensions as filters', () => {
  test('a country filter takes two-letter codes and refuses anything else by name', () => {
    expect(parseFilters({ src_country: 'US,DE' })).toEqual([{ dimension: 'src_country', kind: 'text', values: ['US', 'DE'] }]);
    expect(() => parseFilters({ dst_country: 'usa' })).toThrow(/invalid filter: dst_country/);
  });

  test('a network label filter takes the labels a network may have, and no quote', () => {
    expect(parseFilters({ dst_net_site: 'par1' })).toEqual([{ dimension: 'dst_net_site', kind: 'text', values: ['par1'] }]);
    expect(() => parseFilters({ dst_net_site: "x' OR 1=1" })).toThrow(/invalid filter/);
  });
});

describe('IPv6 keys scanned by hand', () => {
  test('agree with the generic address parser on every spelling, and refuse what is not an address', () => {
    const spellings = ['::', '::1', '1::', '2001:db8::1', '2001:DB8:0:0:8:800:200C:417A', 'fe80::1:2:3:4:5:6', '1:2:3:4:5:6:7::', '::2:3:4:5:6:7:8', '1:2:3:4:5:6:7:8', '::ffff:102:304', '2001:db8:0:1::42'];
    for (const text of spellings) {
      const bytes = addressBytes(text);
      const words = Array.from({ length: 4 }, (_, i) => ((bytes[4 * i]! << 24) | (bytes[4 * i + 1]! << 16) | (bytes[4 * i + 2]! << 8) | bytes[4 * i + 3]!) >>> 0);
      const want = words[0] === 0 && words[1] === 0 && words[2] === 0xffff ? { v4: words[3] } : { v6: Uint32Array.from(words) };
      expect([text, addressKey(text)]).toEqual([text, want]);
    }
    for (const bad of [':', ':::', '1::2::3', '1:2:3:4:5:6:7:8:9', '12345::', 'g::1', '1:2:3:4:5:6:7', ':1:2:3:4:5:6:7', '1:2:3:4:5:6:7:']) expect([bad, addressKey(bad)]).toEqual([bad, undefined]);
  });
});
