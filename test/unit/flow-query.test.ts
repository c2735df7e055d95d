import { SocketAddress } from 'node:net';
import { isEnrichedDimension } from '../../core/enrichment/dimensions';
import { AppError } from '../../core/errors';
import { dimensionSpecs, flowDimensions } from '../../core/flow-dimensions';
import {
  addressBytes,
  defaultStep,
  parseAddressRange,
  parseDimensionList,
  parseFilters,
  planFlowQuery,
  rawReason,
  seriesPlan,
  seriesPoints,
  stepStarts,
  type FlowFilter,
} from '../../core/flow-query';
import { dimensionKeys } from '../../storage/migrations/flow-tables';

const minute = 60_000;
const hour = 60 * minute;
const day = 24 * hour;
const mapped = (tail: string) => `0000:0000:0000:0000:0000:ffff:${tail}`;

/** The error a call throws, as the API would answer it. */
function thrown(fn: () => unknown): AppError {
  try {
    fn();
  } catch (err) {
    if (err instanceof AppError) return err;
    throw err;
  }
  throw new Error('nothing thrown');
}

describe('addresses as bytes', () => {
  test.each([
    ['::', '00000000000000000000000000000000'],
    ['::1', '00000000000000000000000000000001'],
    ['1::', '00010000000000000000000000000000'],
    ['2001:db8::1', '20010db8000000000000000000000001'],
    ['fe80::1:2:3', 'fe800000000000000000000100020003'],
    ['2001:DB8:0:0:8:800:200C:417A', '20010db80000000000080800200c417a'],
    ['a:b:c:d:e:f:1.2.3.4', '000a000b000c000d000e000f01020304'],
    ['::ffff:10.0.0.1', '00000000000000000000ffff0a000001'],
    ['::1.2.3.4', '00000000000000000000000001020304'],
    ['1:2:3:4:5:6:7:8', '00010002000300040005000600070008'],
    ['1:2::7:8', '00010002000000000000000000070008'],
  ])('%s reads as the bytes %s', (text, hex) => {
    expect(addressBytes(text).map((b) => b.toString(16).padStart(2, '0')).join('')).toBe(hex);
  });

  test('an address and node\'s own spelling of it read as the same bytes', () => {
    for (const text of ['2001:0db8:0000:0000:0000:ff00:0042:8329', '::ffff:192.0.2.1', 'FE80::0202:B3FF:FE1E:8329']) {
      expect(addressBytes(new SocketAddress({ address: text, family: 'ipv6' }).address)).toEqual(addressBytes(text));
    }
  });

  test('an IPv4 address reads as its IPv4-mapped IPv6 bytes', () => {
    expect(addressBytes('10.0.0.1')).toEqual([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 255, 255, 10, 0, 0, 1]);
    expect(addressBytes('10.0.0.1')).toEqual(addressBytes('::ffff:10.0.0.1'));
  });
});

describe('address ranges', () => {
  test('an IPv4 prefix is the range of its mapped addresses', () => {
    expect(parseAddressRange('10.0.0.0/8')).toEqual({ first: mapped('0a00:0000'), last: mapped('0aff:ffff') });
    expect(parseAddressRange('192.168.4.0/22')).toEqual({ first: mapped('c0a8:0400'), last: mapped('c0a8:07ff') });
    expect(parseAddressRange('0.0.0.0/0')).toEqual({ first: mapped('0000:0000'), last: mapped('ffff:ffff') });
  });

  test('an IPv6 prefix is the range of its addresses', () => {
    expect(parseAddressRange('2001:db8::/32')).toEqual({ first: '2001:0db8:0000:0000:0000:0000:0000:0000', last: '2001:0db8:ffff:ffff:ffff:ffff:ffff:ffff' });
    expect(parseAddressRange('2001:db8:8000::/33')?.last).toBe('2001:0db8:ffff:ffff:ffff:ffff:ffff:ffff');
    expect(parseAddressRange('::/0')).toEqual({ first: '0000:0000:0000:0000:0000:0000:0000:0000', last: 'ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff' });
  });

  test('an exact address is a range of one, however it is spelled', () => {
    expect(parseAddressRange('10.1.2.3')).toEqual({ first: mapped('0a01:0203'), last: mapped('0a01:0203') });
    expect(parseAddressRange('::FFFF:10.1.2.3')).toEqual(parseAddressRange('10.1.2.3'));
    expect(parseAddressRange('2001:DB8::1')).toEqual(parseAddressRange('2001:0db8:0:0:0:0:0:1'));
  });

  test('the bits of an address beyond its prefix are ignored', () => {
    expect(parseAddressRange('10.1.2.3/8')).toEqual(parseAddressRange('10.0.0.0/8'));
    expect(parseAddressRange('10.1.2.3/31')).toEqual({ first: mapped('0a01:0202'), last: mapped('0a01:0203') });
  });

  test.each(['10.0.0.0/33', '2001:db8::/129', '10.0.0.0/', '10.0.0.0/8/9', '10.0.0.0/-1', '10.0.0.0/ 8', 'fe80::1%eth0', '999.1.1.1', 'example.com', ''])(
    '%j is neither an address nor a prefix',
    (text) => expect(parseAddressRange(text)).toBeUndefined(),
  );
});

describe('filters', () => {
  test('a comma-separated list is one filter of every value, of any family', () => {
    const [filter] = parseFilters({ src_ip: '10.0.0.0/8, 2001:db8::/32' });
    expect(filter).toEqual({ dimension: 'src_ip', kind: 'address', ranges: [parseAddressRange('10.0.0.0/8'), parseAddressRange('2001:db8::/32')] });
  });

  test('numbers, protocol names and addresses each parse by their dimension, and other parameters are left alone', () => {
    const filters = parseFilters({ dst_port: '443,80', protocol: 'TCP,udp,tcp', exporter: '192.0.2.1', tos: '0', from: '5', limit: '10' });
    expect(filters).toEqual<FlowFilter[]>([
      { dimension: 'dst_port', kind: 'number', values: [443, 80] },
      { dimension: 'protocol', kind: 'protocol', values: ['tcp', 'udp'] },
      { dimension: 'exporter', kind: 'address', ranges: [parseAddressRange('192.0.2.1')!] },
      { dimension: 'tos', kind: 'number', values: [0] },
    ]);
  });

  test.each([
    ['src_port', '65536'],
    ['tos', '256'],
    ['tcp_flags', '65536'],
    ['dst_as', '4294967296'],
    ['in_if', '-1'],
    ['out_if', '1.5'],
    ['src_as', 'AS64500'],
    ['dst_ip', '10.0.0.0/33'],
    ['exporter', 'router1'],
    ['protocol', 'a-protocol-name-too-long'],
    ['dst_port', '80,,443'],
    ['src_port', ''],
  ])('%s=%j is a validation error naming the parameter', (name, value) => {
    const err = thrown(() => parseFilters({ [name]: value }));
    expect(err.code).toBe('VALIDATION_ERROR');
    expect(err.details).toEqual([{ path: name, message: expect.any(String) as string }]);
  });

  test('every bad parameter is named, not only the first', () => {
    const err = thrown(() => parseFilters({ src_ip: 'x', dst_port: 'y', protocol: 'tcp' }));
    expect(err.details?.map((d) => d.path)).toEqual(['src_ip', 'dst_port']);
  });

  test('a filter takes at most 100 values', () => {
    expect(parseFilters({ dst_port: Array.from({ length: 100 }, (_, i) => i).join(',') })).toHaveLength(1);
    expect(thrown(() => parseFilters({ dst_port: Array.from({ length: 101 }, (_, i) => i).join(',') })).details?.[0]?.path).toBe('dst_port');
  });
});

describe('dimension lists', () => {
  test('a list names distinct dimensions, at most as many as allowed', () => {
    expect(parseDimensionList('src_ip,dst_ip', 'by', 3)).toEqual(['src_ip', 'dst_ip']);
    expect(thrown(() => parseDimensionList('src_ip,color', 'by', 3)).details).toEqual([{ path: 'by', message: expect.stringContaining('"color"') as string }]);
    expect(thrown(() => parseDimensionList('src_ip,src_ip', 'by', 3)).details?.[0]?.path).toBe('by');
    expect(thrown(() => parseDimensionList('src_ip,dst_ip,tos,tcp_flags', 'by', 3)).details?.[0]?.path).toBe('by');
    expect(thrown(() => parseDimensionList('src_ip,dst_ip', 'split_by', 1)).details?.[0]?.path).toBe('split_by');
  });
});

describe('where a query is answered', () => {
  const filter = (raw: Record<string, string>) => parseFilters(raw);

  test('a query on the destination and protocol alone reads the destination rollups, one on the source alone the source rollups', () => {
    expect(planFlowQuery(['dst_ip', 'protocol'], filter({ dst_ip: '10.0.0.0/8' }))).toEqual({ source: 'dst' });
    expect(planFlowQuery(['protocol'], [])).toEqual({ source: 'dst' });
    expect(planFlowQuery([], [])).toEqual({ source: 'dst' });
    expect(planFlowQuery(['src_ip'], filter({ src_ip: '2001:db8::/32' }))).toEqual({ source: 'src' });
    expect(planFlowQuery([], filter({ src_ip: '10.0.0.1' }))).toEqual({ source: 'src' });
  });

  test('a dimension no rollup keeps, or keys no rollup keeps together, send a query to the raw flows and say why', () => {
    const byPort = planFlowQuery(['dst_port'], []);
    expect(byPort).toEqual({ source: 'raw', because: ['dst_port'] });
    expect(rawReason(byPort)).toBe('dst_port is kept by no rollup');
    const pair = planFlowQuery(['src_ip', 'dst_ip'], []);
    expect(pair).toEqual({ source: 'raw', because: ['src_ip', 'dst_ip'] });
    expect(rawReason(pair)).toBe('src_ip, dst_ip are kept together by no rollup');
    expect(planFlowQuery(['src_ip'], filter({ protocol: 'tcp' }))).toEqual({ source: 'raw', because: ['src_ip', 'protocol'] });
    expect(planFlowQuery(['dst_ip'], filter({ exporter: '192.0.2.1', dst_port: '53' }))).toEqual({ source: 'raw', because: ['dst_port'] });
    const addressAndAs = planFlowQuery(['src_ip', 'src_as'], []);
    expect(addressAndAs).toEqual({ source: 'raw', because: ['src_ip', 'src_as'] });
    expect(rawReason(addressAndAs)).toBe('src_ip, src_as are kept together by no rollup');
  });

  test('a query on AS numbers, countries, network names, the exporter and its interfaces reads the dimension rollups', () => {
    expect(planFlowQuery(['dst_as'], [])).toEqual({ source: 'dims' });
    expect(planFlowQuery(['src_as', 'dst_country'], filter({ protocol: 'udp', src_net_name: 'office' }))).toEqual({ source: 'dims' });
    expect(planFlowQuery(['exporter', 'in_if', 'out_if'], filter({ src_country: 'DE' }))).toEqual({ source: 'dims' });
  });

  test('interface and exporter names and classes read the dimension rollups, which keep the exporter and interfaces they are joined by', () => {
    expect(planFlowQuery(['in_if_name', 'exporter_site'], filter({ out_if_boundary: 'external' }))).toEqual({ source: 'dims' });
  });

  test('the dimension rollups keep as keys exactly the stored dimensions the dims family names', () => {
    const family = flowDimensions.filter((d) => dimensionSpecs[d].families?.includes('dims') && !isEnrichedDimension(d));
    expect([...family].sort()).toEqual([...dimensionKeys].sort());
  });

  test('a series on the dimension rollups whose step is whole 5 minutes reads them', () => {
    expect(seriesPlan({ source: 'dims' }, 300, ['src_as'])).toEqual({ source: 'dims' });
    expect(seriesPlan({ source: 'dims' }, 3600, ['src_as'])).toEqual({ source: 'dims' });
    expect(seriesPlan({ source: 'dims' }, 86_400, ['src_as'])).toEqual({ source: 'dims' });
  });

  test('a series on the dimension rollups whose step is not whole 5 minutes reads the raw flows, and says why', () => {
    const plan = seriesPlan({ source: 'dims' }, 420, ['src_as', 'src_as', 'protocol']);
    expect(plan).toEqual({ source: 'raw', because: ['src_as', 'protocol'], stepSeconds: 420 });
    expect(rawReason(plan)).toBe('the rollup of src_as, protocol keeps buckets of 5 minutes at the finest, not steps of 7 minutes');
  });

  test('a series on the destination or source rollups reads them at any whole-minute step', () => {
    expect(seriesPlan({ source: 'dst' }, 60, [])).toEqual({ source: 'dst' });
    expect(seriesPlan({ source: 'src' }, 420, ['src_ip'])).toEqual({ source: 'src' });
  });

  test('network roles, sites and tenants, ports, TCP flags and ToS are kept by no rollup', () => {
    for (const d of ['src_net_role', 'dst_net_site', 'src_net_tenant', 'src_port', 'tcp_flags', 'tos'] as const) {
      expect(planFlowQuery([d], [])).toEqual({ source: 'raw', because: [d] });
    }
  });
});

describe('series steps', () => {
  test('steps start at multiples of the step and cover the range, partial steps at the edges included', () => {
    expect(stepStarts({ from: 0, to: hour }, 15 * minute)).toEqual([0, 15 * minute, 30 * minute, 45 * minute]);
    expect(stepStarts({ from: 10 * minute + 1, to: 31 * minute }, 15 * minute)).toEqual([0, 15 * minute, 30 * minute]);
    expect(stepStarts({ from: 10 * minute, to: 30 * minute }, 15 * minute)).toEqual([0, 15 * minute]);
  });

  test('the default step is the smallest round step that keeps the series within 300 points', () => {
    const t0 = Date.UTC(2024, 0, 1);
    expect(defaultStep({ from: t0, to: t0 + hour })).toBe(60);
    expect(defaultStep({ from: t0, to: t0 + 5 * hour })).toBe(60);
    expect(defaultStep({ from: t0, to: t0 + 5 * hour + 1 })).toBe(120);
    expect(defaultStep({ from: t0, to: t0 + day })).toBe(300);
    expect(defaultStep({ from: t0, to: t0 + 7 * day })).toBe(3600);
    expect(defaultStep({ from: t0, to: t0 + 31 * day })).toBe(10_800);
    expect(defaultStep({ from: t0, to: t0 + 400 * day })).toBe(2 * 86_400);
  });

  test('every step of the range is a point, zero where nothing flowed, with bits and packets per second of the step', () => {
    const points = seriesPoints({ from: 0, to: 3 * minute }, minute, [{ t: minute, bytes: 750, packets: 30 }]);
    expect(points).toEqual([
      { t: 0, bps: 0, pps: 0, bytes: 0, packets: 0 },
      { t: minute, bps: 100, pps: 0.5, bytes: 750, packets: 30 },
      { t: 2 * minute, bps: 0, pps: 0, bytes: 0, packets: 0 },
    ]);
  });
});
