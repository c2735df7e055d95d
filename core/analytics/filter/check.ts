import { parseAddressRange, type AddressRange } from '../../flow-query';
import { FilterError, type FilterNode, type Literal } from './ast';
import type { CatalogDimension, FilterCatalog, FilterTable } from './catalog';
import { parseFilterText } from './parse';

/**
 * A parsed filter checked against a catalog: every dimension known, every
 * operator one its type takes, every value of its type. What the compiler
 * (storage) and the evaluator read: equality is a value list, so `=` is a
 * one-value IN and `!=` a negated one; an address value is a range, so an
 * exact address and a prefix are the same condition.
 */
export type CheckedNode =
  | { type: 'and' | 'or'; terms: CheckedNode[] }
  | { type: 'not'; term: CheckedNode }
  | { type: 'in'; dimension: string; negated: boolean; values: number[] | string[] }
  | { type: 'within'; dimension: string; negated: boolean; ranges: AddressRange[] }
  | { type: 'order'; dimension: string; op: '<' | '<=' | '>' | '>='; value: number }
  | { type: 'like'; dimension: string; negated: boolean; insensitive: boolean; pattern: string };

export interface CheckedFilter {
  root: CheckedNode;
  /** The dimensions it names, in the order they first appear. */
  dimensions: string[];
  /** The tables that can answer it, coarsest first (never empty: the raw flows answer every dimension). */
  tables: FilterTable[];
}

const typeWords = { address: 'an IPv4 or IPv6 address or prefix', number: 'a whole number', string: 'a quoted string' };

function numberOf(spec: CatalogDimension, v: Literal): number {
  const text = spec.asn && v.kind === 'word' && /^as\d+$/i.test(v.text) ? v.text.slice(2) : v.text;
  const n = v.kind !== 'string' && /^\d{1,10}$/.test(text) ? Number(text) : NaN;
  const max = spec.max ?? Number.MAX_SAFE_INTEGER;
  if (!(n <= max)) throw new FilterError(v.at, `a whole number from 0 to ${max}${spec.asn ? ' (or AS followed by one)' : ''}`, JSON.stringify(v.text));
  return n;
}

function rangeOf(v: Literal): AddressRange {
  const range = parseAddressRange(v.text);
  if (!range) throw new FilterError(v.at, typeWords.address, JSON.stringify(v.text));
  return range;
}

function stringOf(spec: CatalogDimension, v: Literal): string {
  if (v.kind !== 'string') throw new FilterError(v.at, typeWords.string, JSON.stringify(v.text));
  return spec.lower ? v.text.toLowerCase() : v.text;
}

function valuesOf(spec: CatalogDimension, values: Literal[]): number[] | string[] {
  return spec.type === 'number' ? values.map((v) => numberOf(spec, v)) : values.map((v) => stringOf(spec, v));
}

type Condition = Extract<FilterNode, { dimension: string }>;

const operatorsOf = { address: '= != << !<< IN NOT IN', number: '= != < <= > >= IN NOT IN', string: '= != IN NOT IN LIKE NOT LIKE ILIKE' };

function checkCondition(node: Condition, spec: CatalogDimension): CheckedNode {
  const { dimension } = node;
  const wrongOperator = (op: string): never => {
    throw new FilterError(node.at, `an operator that ${dimension} (${spec.type}) takes: ${operatorsOf[spec.type]}`, op);
  };
  if (node.type === 'like') {
    if (spec.type !== 'string') wrongOperator(node.insensitive ? 'ILIKE' : 'LIKE');
    return { type: 'like', dimension, negated: node.negated, insensitive: node.insensitive, pattern: node.pattern.text };
  }
  const values = node.type === 'in' ? node.values : [node.value];
  const op = node.type === 'in' ? (node.negated ? '!=' : '=') : node.op;
  if (spec.type === 'address') {
    if (!['=', '!=', '<<', '!<<'].includes(op)) wrongOperator(op);
    return { type: 'within', dimension, negated: op.startsWith('!'), ranges: values.map(rangeOf) };
  }
  if (op === '=' || op === '!=') return { type: 'in', dimension, negated: op === '!=', values: valuesOf(spec, values) };
  if (spec.type !== 'number' || op === '<<' || op === '!<<') return wrongOperator(op);
  return { type: 'order', dimension, op, value: numberOf(spec, values[0]!) };
}

function checkNode(node: FilterNode, catalog: FilterCatalog, used: Set<string>): CheckedNode {
  if (node.type === 'not') return { type: 'not', term: checkNode(node.term, catalog, used) };
  if (!('dimension' in node)) return { type: node.type, terms: node.terms.map((t) => checkNode(t, catalog, used)) };
  const spec = Object.hasOwn(catalog.dimensions, node.dimension) ? catalog.dimensions[node.dimension] : undefined;
  if (!spec) throw new FilterError(node.at, `a dimension (one of ${Object.keys(catalog.dimensions).join(', ')})`, JSON.stringify(node.dimension));
  used.add(node.dimension);
  return checkCondition(node, spec);
}

/** A syntax tree checked against a catalog, with the tables that can answer it. */
export function checkFilter(node: FilterNode, catalog: FilterCatalog): CheckedFilter {
  const used = new Set<string>();
  const root = checkNode(node, catalog, used);
  const dimensions = [...used];
  const tables = catalog.tables.filter((t) => dimensions.every((d) => catalog.dimensions[d]!.tables.includes(t)));
  return { root, dimensions, tables };
}

/** A filter text parsed and checked, or undefined when it holds no condition. Throws FilterError naming the place. */
export function readFilter(text: string, catalog: FilterCatalog): CheckedFilter | undefined {
  const node = parseFilterText(text);
  return node === undefined ? undefined : checkFilter(node, catalog);
}
