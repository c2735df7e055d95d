import { enrichedDimensionKind, enrichedDimensions } from '../../enrichment/dimensions';
import { dimensionSpecs, enrichedTextDimensions, type FlowDimension } from '../../flow-dimensions';

/**
 * The dimensions a filter may name, as data: each one's type and the
 * tables that can answer it (with the column expression where it is not the
 * dimension's own name). The compiler and the evaluator read nothing else,
 * so a new dimension is one line here.
 *
 * Tables are named by the plan's source (core/flow-query.ts): `dst` the
 * destination rollups (flows_1m…, keyed by dst_ip and protocol), `src` the
 * source rollups (flows_src_1m…, keyed by src_ip), `dims` the dimension
 * rollups (flows_dims_5m and _1h, keyed by exporter, interfaces, AS numbers,
 * countries, protocol and network names), `raw` the flows. Which rollups
 * answer a dimension is core/flow-dimensions.ts's `families`.
 */
export type FilterTable = 'dst' | 'src' | 'dims' | 'raw';
export type FilterValueType = 'address' | 'number' | 'string';

export interface CatalogDimension {
  type: FilterValueType;
  /** The tables that can answer it. */
  tables: readonly FilterTable[];
  /** The column expression on a table, when it is not the dimension's name. */
  columns?: Partial<Record<FilterTable, string>>;
  /** A number dimension's largest value (its column type's). */
  max?: number;
  /** A number dimension that also takes `AS13335` for 13335. */
  asn?: boolean;
  /** A string dimension stored lower-cased: values compared with `=` and IN are lower-cased too. */
  lower?: boolean;
}

export interface FilterCatalog {
  /** Every table, coarsest first: a filter is answered by the first one that holds all its dimensions. */
  tables: readonly FilterTable[];
  dimensions: Readonly<Record<string, CatalogDimension>>;
}

const u32 = 4_294_967_295;
/** The rollups that answer a dimension, then the raw flows, which answer every one. */
const tables = (d: FlowDimension): readonly FilterTable[] => [...(dimensionSpecs[d].families ?? []), 'raw'];

export const flowFilterCatalog: FilterCatalog = {
  tables: ['dst', 'src', 'dims', 'raw'],
  dimensions: {
    src_ip: { type: 'address', tables: tables('src_ip') },
    dst_ip: { type: 'address', tables: tables('dst_ip') },
    src_port: { type: 'number', tables: tables('src_port'), max: 65_535 },
    dst_port: { type: 'number', tables: tables('dst_port'), max: 65_535 },
    protocol: { type: 'string', tables: tables('protocol'), lower: true },
    exporter: { type: 'address', tables: tables('exporter') },
    in_if: { type: 'number', tables: tables('in_if'), max: u32 },
    out_if: { type: 'number', tables: tables('out_if'), max: u32 },
    src_as: { type: 'number', tables: tables('src_as'), max: u32, asn: true },
    dst_as: { type: 'number', tables: tables('dst_as'), max: u32, asn: true },
    tcp_flags: { type: 'number', tables: tables('tcp_flags'), max: 0xffff },
    tos: { type: 'number', tables: tables('tos'), max: 255 },
    // Countries and the workspace's network labels, stored on the raw flows at ingest (docs/enrichment.md); names kept by the dimension rollups.
    ...Object.fromEntries(enrichedTextDimensions.map((d) => [d, { type: 'string', tables: tables(d) }])),
    // Interface and exporter names and classes, resolved when read by a join on the raw flows or the dimension rollups (storage/enrichment/interface-join.ts).
    ...Object.fromEntries(
      enrichedDimensions.map((d) => [d, enrichedDimensionKind(d) === 'number' ? { type: 'number', tables: tables(d), max: u32 } : { type: 'string', tables: tables(d) }]),
    ),
  },
};

/** The column that answers a dimension on a table. */
export const columnOf = (catalog: FilterCatalog, dimension: string, table: FilterTable): string =>
  catalog.dimensions[dimension]?.columns?.[table] ?? dimension;
