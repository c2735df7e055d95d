import { flowFilterCatalog } from '../../core/analytics/filter/catalog';
import { readFilter } from '../../core/analytics/filter/check';
import { dimensionSpecs, flowDimensions } from '../../core/flow-dimensions';
import { planFlowQuery, rawReason } from '../../core/flow-query';
import { filterSql } from '../../storage/analytics/filter-sql';
import { dialectOf } from '../../storage/dialect';

/**
 * The catalog the filter is checked and compiled against, the SQL it
 * compiles to on both ClickHouse generations, and the plan that routes a
 * query with a filter to the coarsest table that can answer it.
 */
const current = dialectOf('26.7.1');
const legacy = dialectOf('18.16.1');
const read = (text: string) => readFilter(text, flowFilterCatalog)!;

describe('the flow filter catalog', () => {
  test('names every flow dimension, with the type and the rollup family core/flow-query.ts gives it', () => {
    expect(Object.keys(flowFilterCatalog.dimensions).sort()).toEqual([...flowDimensions].sort());
    for (const d of flowDimensions) {
      const entry = flowFilterCatalog.dimensions[d]!;
      const spec = dimensionSpecs[d];
      expect([d, entry.type]).toEqual([d, spec.kind === 'protocol' || spec.kind === 'text' ? 'string' : spec.kind]);
      expect([d, entry.tables]).toEqual([d, [...(spec.families ?? []), 'raw']]);
      if (spec.kind === 'number') expect([d, entry.max]).toEqual([d, spec.max]);
    }
  });
});

describe('filters compiled to SQL', () => {
  test('each operator becomes its condition, values quoted by the literal helpers, on current ClickHouse', () => {
    const filter = read(
      "(dst_as = AS13335 OR dst_port NOT IN (80, 443)) AND NOT src_ip << 10.0.0.0/8 AND tos >= 8 AND protocol ILIKE 'T%' AND protocol NOT LIKE 'u_p'",
    );
    expect(filterSql(current, filter, flowFilterCatalog, 'raw')).toBe(
      '(((dst_as IN (13335)) OR (dst_port NOT IN (80, 443))) AND (NOT ((src_ip >= toIPv6(\'0000:0000:0000:0000:0000:ffff:0a00:0000\') AND ' +
        "src_ip <= toIPv6('0000:0000:0000:0000:0000:ffff:0aff:ffff')))) AND (tos >= 8) AND (lower(protocol) LIKE lower('T%')) AND (NOT protocol LIKE 'u_p'))",
    );
  });

  test('addresses compare as bytes on 18.16 too, where they are stored as text', () => {
    expect(filterSql(legacy, read('dst_ip != 2001:db8::1'), flowFilterCatalog, 'dst')).toBe(
      "(NOT (if(position(dst_ip, ':') = 0 AND dst_ip != '', IPv4ToIPv6(IPv4StringToNum(dst_ip)), IPv6StringToNum(dst_ip)) = IPv6StringToNum('2001:0db8:0000:0000:0000:0000:0000:0001')))",
    );
  });

  test('a hostile string stays one quoted value', () => {
    const sql = filterSql(current, read(String.raw`protocol IN ('x\' OR 1=1 --', 'a\\')`), flowFilterCatalog, 'raw');
    expect(sql).toBe(String.raw`(protocol IN ('x\' or 1=1 --', 'a\\'))`);
  });

  test('a table that cannot answer the filter is refused rather than queried', () => {
    expect(() => filterSql(current, read('dst_port = 53'), flowFilterCatalog, 'dst')).toThrow('the dst table cannot answer a filter on dst_port');
  });
});

describe('a query with a filter goes to the coarsest table that answers it', () => {
  test('rollups answer filters on their keys, the raw flows filters on ports, interfaces, AS or the other side', () => {
    expect(planFlowQuery([], [], read("dst_ip << 192.0.2.0/24 AND protocol = 'udp'"))).toEqual({ source: 'dst' });
    expect(planFlowQuery(['src_ip'], [], read('src_ip << 2001:db8::/32'))).toEqual({ source: 'src' });
    expect(planFlowQuery([], [], read('src_ip = 10.0.0.1'))).toEqual({ source: 'src' });
    const ports = planFlowQuery(['dst_ip'], [], read('dst_port = 53'));
    expect(ports).toEqual({ source: 'raw', because: ['dst_port'] });
    expect(rawReason(ports)).toBe('dst_port is kept by no rollup');
    const sides = planFlowQuery(['dst_ip'], [], read('src_ip = 10.0.0.1'));
    expect(sides).toEqual({ source: 'raw', because: ['dst_ip', 'src_ip'] });
    expect(rawReason(sides)).toBe('dst_ip, src_ip are kept together by no rollup');
  });

  test('the dimension rollups answer filters on AS numbers, countries, interfaces and their names, on both generations', () => {
    const filter = read("src_as = AS13335 AND dst_country IN ('NL', 'DE') AND in_if_boundary = 'external' AND protocol = 'tcp'");
    expect(filter.tables).toEqual(['dims', 'raw']);
    expect(planFlowQuery(['exporter_name'], [], filter)).toEqual({ source: 'dims' });
    expect(filterSql(legacy, read('exporter << 192.0.2.0/24'), flowFilterCatalog, 'dims')).toMatch(/^\(\(if\(position\(exporter/);
    expect(planFlowQuery(['src_as'], [], read('dst_port = 53'))).toEqual({ source: 'raw', because: ['dst_port'] });
  });
});
