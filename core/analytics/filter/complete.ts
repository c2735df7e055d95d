import type { FilterCatalog } from './catalog';
import { filterKeywords } from './parse';

/**
 * Completion of the filter language's words (GET /v1/telemetry/flows/complete
 * without a dimension): the dimension names of the catalog, then the
 * keywords, whose start matches the prefix in any case. Pure: the values of
 * a dimension come from the workspace's data (the route asks storage).
 */
export interface Completion {
  value: string;
  label: string;
  kind: 'dimension' | 'keyword' | 'value';
}

/** Dimension names first (labelled by their type), then keywords (only once a letter is typed: a filter starts with a dimension, NOT or "("). */
export function wordCompletions(catalog: FilterCatalog, prefix: string, limit: number): Completion[] {
  const start = prefix.toLowerCase();
  const names = Object.entries(catalog.dimensions)
    .filter(([name]) => name.startsWith(start))
    .map(([name, d]): Completion => ({ value: name, label: d.asn ? `${d.type} (AS number)` : d.type, kind: 'dimension' }));
  const words = start
    ? filterKeywords.filter((k) => k.toLowerCase().startsWith(start)).map((k): Completion => ({ value: k, label: 'keyword', kind: 'keyword' }))
    : [];
  return [...names, ...words].slice(0, limit);
}

/** A typed value prefix as the stored text starts: `AS133` of an AS dimension is `133`. */
export function valuePrefix(catalog: FilterCatalog, dimension: string, prefix: string): string {
  return catalog.dimensions[dimension]?.asn ? prefix.replace(/^as/i, '') : prefix;
}
