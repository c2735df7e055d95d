import { flowFilterCatalog } from '../../core/analytics/filter/catalog';
import { readFilter } from '../../core/analytics/filter/check';
import { evaluateFilter, type FlowValues } from '../../core/analytics/filter/evaluate';
import { parseFilterText } from '../../core/analytics/filter/parse';

/**
 * The analyst's filter language, read and applied in memory: the grammar,
 * every operator on every type, and every error with its place. The SQL it
 * compiles to is held to the same answers by the property test
 * (test/integration/flow-filter-property.test.ts).
 */
const read = (text: string) => readFilter(text, flowFilterCatalog);
const base: FlowValues = {
  src_ip: '10.1.2.3', dst_ip: '2001:db8::80', exporter: '', src_port: 40000, dst_port: 443, protocol: 'tcp',
  in_if: 3, out_if: 4, src_as: 64500, dst_as: 13335, tcp_flags: 18, tos: 0,
};
const passes = (text: string, flow: FlowValues = base) => evaluateFilter(read(text), { ...base, ...flow });

describe('the filter grammar', () => {
  test('AND binds tighter than OR, NOT tighter than both, and parentheses regroup', () => {
    expect(passes('dst_as = 1 AND dst_as = 2 OR dst_port = 443')).toBe(true);
    expect(passes('dst_as = 1 AND (dst_as = 2 OR dst_port = 443)')).toBe(false);
    expect(passes('NOT dst_as = 1 AND dst_port = 443')).toBe(true);
    expect(passes('NOT (dst_as = 13335 AND dst_port = 443)')).toBe(false);
    expect(passes('NOT NOT dst_as = 13335')).toBe(true);
  });

  test('keywords and dimension names are read in any case, and comments are skipped', () => {
    expect(passes("DST_AS = 13335 and Protocol in ('TCP') -- a comment\n or /* another */ dst_port = 1")).toBe(true);
  });

  test('a text of blanks and comments holds no filter, and every flow passes it', () => {
    expect(read('  -- nothing\n /* at all */ ')).toBeUndefined();
    expect(evaluateFilter(undefined, base)).toBe(true);
  });

  test('every node of the tree keeps its offset, line and column', () => {
    expect(parseFilterText('dst_as = 1 AND\n  src_port IN (2, 3)')).toEqual({
      type: 'and',
      at: { offset: 0, line: 1, column: 1 },
      terms: [
        { type: 'compare', dimension: 'dst_as', op: '=', value: { kind: 'number', text: '1', at: { offset: 9, line: 1, column: 10 } }, at: { offset: 0, line: 1, column: 1 } },
        {
          type: 'in', dimension: 'src_port', negated: false, at: { offset: 17, line: 2, column: 3 },
          values: [{ kind: 'number', text: '2', at: { offset: 30, line: 2, column: 16 } }, { kind: 'number', text: '3', at: { offset: 33, line: 2, column: 19 } }],
        },
      ],
    });
  });
});

describe('every operator', () => {
  test('numbers compare with = != <> < <= > >= IN and NOT IN, and AS numbers take the AS prefix', () => {
    const cases: Array<[string, boolean]> = [
      ['dst_port = 443', true], ['dst_port != 443', false], ['dst_port <> 80', true], ['dst_port < 443', false], ['dst_port <= 443', true],
      ['dst_port > 442', true], ['dst_port >= 444', false], ['dst_port IN (80, 443)', true], ['dst_port NOT IN (80, 443)', false],
      ['dst_port NOTIN (80)', true], ['dst_as = AS13335', true], ['src_as IN (as64500, 1)', true], ['tos = 0', true],
    ];
    for (const [text, expected] of cases) expect([text, passes(text)]).toEqual([text, expected]);
  });

  test('addresses match exactly or by prefix, IPv4 and IPv6, with = != << !<< IN and NOT IN', () => {
    const cases: Array<[string, boolean]> = [
      ['src_ip = 10.1.2.3', true], ['src_ip = 10.1.2.4', false], ['src_ip << 10.0.0.0/8', true], ['src_ip !<< 10.0.0.0/8', false],
      ['src_ip = 10.0.0.0/8', true], ["src_ip << '10.1.2.0/24'", true], ['dst_ip << 2001:db8::/32', true], ['dst_ip << 2001:db9::/32', false],
      ['dst_ip != 2001:db8::80', false], ['dst_ip IN (192.0.2.1, 2001:db8:0:0::80)', true], ['src_ip NOT IN (11.0.0.0/8, ::/0)', false],
      ['src_ip << ::ffff:10.0.0.0/104', true], ['exporter = ::', true], ['exporter << 192.0.2.0/24', false],
    ];
    for (const [text, expected] of cases) expect([text, passes(text)]).toEqual([text, expected]);
  });

  test('strings compare with = != IN NOT IN, LIKE, NOT LIKE, UNLIKE, ILIKE, NOT ILIKE and IUNLIKE', () => {
    const cases: Array<[string, boolean]> = [
      ["protocol = 'TCP'", true], ["protocol != 'tcp'", false], ["protocol IN ('udp', 'icmp')", false], ["protocol NOT IN ('udp')", true],
      ["protocol LIKE 't%'", true], ["protocol LIKE 'T%'", false], ["protocol LIKE 't_p'", true], ["protocol LIKE 't_'", false],
      ["protocol NOT LIKE '%c%'", false], ["protocol UNLIKE 'u%'", true], ["protocol ILIKE 'T%P'", true], ["protocol NOT ILIKE 'TCP'", false],
      ["protocol IUNLIKE 'UDP'", true], ["protocol LIKE 'tc\\\\%'", false],
    ];
    for (const [text, expected] of cases) expect([text, passes(text)]).toEqual([text, expected]);
    expect(passes("protocol LIKE '50\\\\%'", { protocol: '50%' })).toBe(true);
    expect(passes("protocol LIKE '50\\\\%'", { protocol: '500' })).toBe(false);
  });
});

describe('which tables answer a filter', () => {
  test('the destination rollups answer dst_ip and protocol, the source rollups src_ip, the raw flows everything', () => {
    expect(read("dst_ip << 10.0.0.0/8 AND protocol = 'udp'")!.tables).toEqual(['dst', 'raw']);
    expect(read('NOT src_ip = 2001:db8::1')!.tables).toEqual(['src', 'raw']);
    expect(read('src_ip = 10.0.0.1 OR dst_ip = 10.0.0.2')!.tables).toEqual(['raw']);
    expect(read('dst_ip = 10.0.0.2 AND dst_port = 53')).toMatchObject({ tables: ['raw'], dimensions: ['dst_ip', 'dst_port'] });
  });
});
