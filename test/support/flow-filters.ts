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

const quote = (s: string) => `'${s.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
const ops = {
  number: ['=', '!=', '<>', '<', '<=', '>', '>=', 'IN', 'NOT IN', 'NOTIN'],
  address: ['=', '!=', '<<', '!<<', 'IN', 'NOT IN'],
  string: ['=', '!=', 'IN', 'NOT IN', 'LIKE', 'NOT LIKE', 'UNLIKE', 'ILIKE', 'NOT ILIKE', 'IUNLIKE'],
};

class FilterGenerator {
  private readonly rand: () => number;
  private readonly names: string[];

  constructor(seed: number, private readonly catalog: FilterCatalog) {
    this.rand = seededRandom(seed);
    this.names = Object.keys(catalog.dimensions);
  }

  private pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.rand() * items.length)]!;
  }

  private chance(p: number): boolean {
    return this.rand() < p;
  }

  private numberPool(d: string, spec: CatalogDimension): number[] {
    return numbers[d] ?? [0, 1, spec.max ?? 1];
  }

  private address(): string {
    return this.pick(this.chance(0.5) ? v4 : v6);
  }

  private randomCase(s: string): string {
    return [...s].map((c) => (this.chance(0.3) ? c.toUpperCase() : c)).join('');
  }

  flow(id: number): GeneratedFlow {
    const f: GeneratedFlow = { id };
    for (const d of this.names) {
      const spec = this.catalog.dimensions[d]!;
      if (spec.type === 'address') f[d] = d === 'exporter' && this.chance(0.3) ? '' : this.address();
      else if (spec.type === 'number') f[d] = this.chance(0.1) ? Math.floor(this.rand() * ((spec.max ?? 1) + 1)) : this.pick(this.numberPool(d, spec));
      else f[d] = this.pick(protocols);
    }
    return f;
  }

  private numberValue(d: string, spec: CatalogDimension): string {
    const n = Math.min(Math.max(this.pick(this.numberPool(d, spec)) + this.pick([0, 0, 0, -1, 1]), 0), spec.max ?? 0);
    return spec.asn && this.chance(0.3) ? `${this.pick(['AS', 'as'])}${n}` : String(n);
  }

  private addressValue(): string {
    const a = this.address();
    const width = a.includes(':') ? 128 : 32;
    const text = this.chance(0.4) ? a : `${a}/${this.chance(0.3) ? this.pick([0, width]) : Math.floor(this.rand() * (width + 1))}`;
    return this.chance(0.2) ? quote(text) : text;
  }

  /** A LIKE pattern from a pool value: some characters become wildcards, most wildcards in the data are escaped. */
  private pattern(): string {
    let p = '';
    for (const c of this.pick(protocols)) {
      const r = this.rand();
      if (c === '\\') p += '\\\\';
      else if (c === '%' || c === '_') p += this.chance(0.7) ? `\\${c}` : c;
      else p += r < 0.15 ? '%' : r < 0.3 ? '_' : r < 0.4 ? `%${c}` : c;
    }
    return quote(this.chance(0.3) ? this.randomCase(p) : p);
  }

  private condition(): string {
    const d = this.pick(this.names);
    const spec = this.catalog.dimensions[d]!;
    const value = () =>
      spec.type === 'number' ? this.numberValue(d, spec) : spec.type === 'address' ? this.addressValue() : quote(this.randomCase(this.pick(protocols)));
    const op = this.pick(ops[spec.type]);
    if (op.endsWith('IN')) return `${d} ${op} (${Array.from({ length: 1 + Math.floor(this.rand() * 4) }, value).join(', ')})`;
    if (op.endsWith('LIKE')) return `${d} ${op} ${this.pattern()}`;
    return `${d} ${op} ${value()}`;
  }

  filter(depth = 0): string {
    const r = this.rand();
    if (depth >= 4 || r < 0.35) return this.condition();
    if (r < 0.5) return `NOT ${this.filter(depth + 1)}`;
    if (r < 0.6) return `(${this.filter(depth + 1)})`;
    // At most 3 × 3 × 2 × 2 conditions, within the parser's bound of 64.
    const terms = Array.from({ length: depth < 2 ? 2 + Math.floor(this.rand() * 2) : 2 }, () => this.filter(depth + 1));
    const joined = terms.join(` ${this.pick(['AND', 'OR', 'and', 'or'])} `);
    return depth > 0 ? `(${joined})` : joined;
  }
}

export const filterGenerators = (seed: number, catalog: FilterCatalog) => new FilterGenerator(seed, catalog);
