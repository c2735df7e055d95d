import type { CatalogDimension, FilterCatalog } from '../../core/analytics/filter/catalog';
import { seededRandom } from './malformed';

/**
 * Seeded generators of flows and of filter texts over a catalog, for the
 * property test that holds the compiled SQL to the plain evaluator. Values
 * are drawn from small pools (with edges: 0, the type's maximum, prefix
 * bounds, LIKE's wildcards as data) so filters select some flows and miss
 * others.
 */
export type GeneratedFlow = Record<string, string | number> & { id: number };

const v4 = ['10.0.0.1', '10.0.0.255', '10.1.0.1', '11.0.0.0', '9.255.255.255', '192.0.2.1', '192.0.2.200', '0.0.0.0', '255.255.255.255'];
const v6 = ['2001:db8::1', '2001:db8::ffff', '2001:db8:1::1', '2001:db9::1', 'fe80::1', '::1', '::ffff:10.0.0.1', 'ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff'];
const protocols = ['tcp', 'udp', 'icmp', 'ipv6-icmp', 'gre', 'a_b', '50%', 'x\\y', "o'k"];
const numbers: Record<string, number[]> = {
  src_port: [0, 22, 53, 80, 443, 8080, 65_535],
  dst_port: [0, 22, 53, 80, 443, 8080, 65_535],
  in_if: [0, 1, 2, 3, 100, 4_294_967_295],
  out_if: [0, 1, 2, 3, 100, 4_294_967_295],
  src_as: [0, 13_335, 15_169, 64_500, 4_294_967_295],
  dst_as: [0, 13_335, 15_169, 64_500, 4_294_967_295],
  tcp_flags: [0, 2, 18, 24, 65_535],
  tos: [0, 8, 184, 255],
};

export function filterGenerators(seed: number, catalog: FilterCatalog) {
  const rand = seededRandom(seed);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(rand() * items.length)]!;
  const chance = (p: number) => rand() < p;
  const names = Object.keys(catalog.dimensions);
  const numberPool = (d: string, spec: CatalogDimension) => numbers[d] ?? [0, 1, spec.max ?? 1];
  const address = () => pick(chance(0.5) ? v4 : v6);

  function flow(id: number): GeneratedFlow {
    const f: GeneratedFlow = { id };
    for (const d of names) {
      const spec = catalog.dimensions[d]!;
      if (spec.type === 'address') f[d] = d === 'exporter' && chance(0.3) ? '' : address();
      else if (spec.type === 'number') f[d] = chance(0.1) ? Math.floor(rand() * ((spec.max ?? 1) + 1)) : pick(numberPool(d, spec));
      else f[d] = pick(protocols);
    }
    return f;
  }

  const quote = (s: string) => `'${s.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
  const randomCase = (s: string) => [...s].map((c) => (chance(0.3) ? c.toUpperCase() : c)).join('');

  function numberValue(d: string, spec: CatalogDimension): string {
    const n = Math.min(Math.max(pick(numberPool(d, spec)) + pick([0, 0, 0, -1, 1]), 0), spec.max ?? 0);
    return spec.asn && chance(0.3) ? `${pick(['AS', 'as'])}${n}` : String(n);
  }

  function addressValue(): string {
    const a = address();
    const width = a.includes(':') ? 128 : 32;
    const text = chance(0.4) ? a : `${a}/${chance(0.3) ? pick([0, width]) : Math.floor(rand() * (width + 1))}`;
    return chance(0.2) ? quote(text) : text;
  }

  /** A LIKE pattern from a pool value: some characters become wildcards, some wildcards in the data are escaped. */
  function pattern(): string {
    const value = pick(protocols);
    let p = '';
    for (const c of value) {
      const r = rand();
      if (c === '\\') p += '\\\\';
      else if (c === '%' || c === '_') p += chance(0.7) ? `\\${c}` : c;
      else p += r < 0.15 ? '%' : r < 0.3 ? '_' : r < 0.4 ? `%${c}` : c;
    }
    return quote(chance(0.3) ? randomCase(p) : p);
  }

  function condition(): string {
    const d = pick(names);
    const spec = catalog.dimensions[d]!;
    const value = () => (spec.type === 'number' ? numberValue(d, spec) : spec.type === 'address' ? addressValue() : quote(randomCase(pick(protocols))));
    const list = () => `(${Array.from({ length: 1 + Math.floor(rand() * 4) }, value).join(', ')})`;
    const ops = { number: ['=', '!=', '<>', '<', '<=', '>', '>=', 'IN', 'NOT IN', 'NOTIN'], address: ['=', '!=', '<<', '!<<', 'IN', 'NOT IN'], string: ['=', '!=', 'IN', 'NOT IN', 'LIKE', 'NOT LIKE', 'UNLIKE', 'ILIKE', 'NOT ILIKE', 'IUNLIKE'] };
    const op = pick(ops[spec.type]);
    if (op.endsWith('IN')) return `${d} ${op} ${list()}`;
    if (op.endsWith('LIKE')) return `${d} ${op} ${pattern()}`;
    return `${d} ${op} ${value()}`;
  }

  function filter(depth = 0): string {
    const r = rand();
    if (depth >= 4 || r < 0.35) return condition();
    if (r < 0.5) return `NOT ${filter(depth + 1)}`;
    if (r < 0.6) return `(${filter(depth + 1)})`;
    // At most 3 × 3 × 2 × 2 conditions, within the parser's bound of 64.
    const terms = Array.from({ length: depth < 2 ? 2 + Math.floor(rand() * 2) : 2 }, () => filter(depth + 1));
    const joined = terms.join(` ${pick(['AND', 'OR', 'and', 'or'])} `);
    return depth > 0 ? `(${joined})` : joined;
  }

  return { flow, filter };
}
