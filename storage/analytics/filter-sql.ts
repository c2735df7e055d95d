import type { CheckedFilter, CheckedNode } from '../../core/analytics/filter/check';
import { columnOf, type FilterCatalog, type FilterTable } from '../../core/analytics/filter/catalog';
import type { Dialect } from '../dialect';
import { int, str, strList } from '../sql';

/**
 * A checked filter (core/analytics/filter/) as a WHERE condition on one
 * table. Column names come from the catalog, never from the text; every
 * value reaches SQL through the literal helpers of sql.ts (ClickHouse 18.16
 * has no server-side query parameters) and the dialect's address ranges.
 * Both generations take it: no ILIKE on 18.16, so ILIKE is LIKE over
 * lower() of both sides (ASCII letters, as the evaluator folds them).
 */
function conditionSql(d: Dialect, node: CheckedNode, column: (dimension: string) => string): string {
  switch (node.type) {
    case 'and':
    case 'or':
      return `(${node.terms.map((t) => conditionSql(d, t, column)).join(` ${node.type.toUpperCase()} `)})`;
    case 'not':
      return `(NOT ${conditionSql(d, node.term, column)})`;
    case 'within': {
      const any = `(${node.ranges.map((r) => d.addressInRange(column(node.dimension), r.first, r.last)).join(' OR ')})`;
      return node.negated ? `(NOT ${any})` : any;
    }
    case 'in': {
      const list = node.values.some((v) => typeof v === 'number') ? `(${(node.values as number[]).map(int).join(', ')})` : strList(node.values as string[]);
      return `(${column(node.dimension)} ${node.negated ? 'NOT IN' : 'IN'} ${list})`;
    }
    case 'order':
      return `(${column(node.dimension)} ${node.op} ${int(node.value)})`;
    case 'like': {
      const like = node.insensitive ? `lower(${column(node.dimension)}) LIKE lower(${str(node.pattern)})` : `${column(node.dimension)} LIKE ${str(node.pattern)}`;
      return node.negated ? `(NOT ${like})` : `(${like})`;
    }
  }
}

/** The condition a filter puts on a table that can answer it (see CheckedFilter.tables). */
export function filterSql(d: Dialect, filter: CheckedFilter, catalog: FilterCatalog, table: FilterTable): string {
  if (!filter.tables.includes(table)) throw new TypeError(`the ${table} table cannot answer a filter on ${filter.dimensions.join(', ')}`);
  return conditionSql(d, filter.root, (dimension) => columnOf(catalog, dimension, table));
}
