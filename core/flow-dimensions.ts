/**
 * The dimension catalog: every name an analyst can filter, group or split
 * flows by, what kind of value it takes and which rollup family keeps it as
 * a key. One list for the query parameters (core/flow-query.ts), the SQL
 * (storage/flow-analytics.ts) and the filter language: a dimension added
 * here is a column of the raw flows of the same name.
 */
import { enrichedDimensionKind, enrichedDimensions, maxTextValue, type EnrichedDimension } from './enrichment/dimensions';

/** Enrichment's text dimensions (docs/enrichment.md): stored at ingest, by the databases and the workspace's own networks. */
export const enrichedTextDimensions = [
  'src_country', 'dst_country',
  'src_net_name', 'dst_net_name', 'src_net_role', 'dst_net_role',
  'src_net_site', 'dst_net_site', 'src_net_tenant', 'dst_net_tenant',
] as const;
export type EnrichedTextDimension = (typeof enrichedTextDimensions)[number];

export const flowDimensions = [
  'src_ip', 'dst_ip', 'src_port', 'dst_port', 'protocol', 'exporter',
  'in_if', 'out_if', 'src_as', 'dst_as', 'tcp_flags', 'tos',
  ...enrichedTextDimensions,
  ...enrichedDimensions,
] as const;
export type FlowDimension = (typeof flowDimensions)[number];
/** address: IPv4/IPv6 or a CIDR prefix; number: a whole number up to `max`; protocol: a protocol name; text: a label matching `pattern`. */
export type DimensionKind = 'address' | 'number' | 'protocol' | 'text';

/**
 * The rollup tables keep one of three key sets: destination and protocol
 * (flows_*), the source (flows_src_*), or the analysts' dimensions
 * (flows_dims_5m and _1h: exporter and interfaces, AS numbers, countries, protocol,
 * network names; no addresses, no ports; docs/enrichment.md).
 */
export type RollupFamily = 'dst' | 'src' | 'dims';

export interface DimensionSpec {
  kind: DimensionKind;
  /** The largest value of a number dimension (its column type's). */
  max: number;
  /** The rollup families that answer it: keep it as a key, or (interface and exporter names and classes) the keys it is joined in by. */
  families?: readonly RollupFamily[];
  /** What a value of a text dimension must look like, and how an error says it. */
  text?: { pattern: RegExp; describe: string };
}

const uint32 = 4_294_967_295;
const dims: readonly RollupFamily[] = ['dims'];
/** Countries as ISO 3166-1 alpha-2 codes, upper case; '' where no database knows the address. */
const country = { kind: 'text', max: 0, text: { pattern: /^[A-Z]{2}$/, describe: 'a two-letter country code (ISO 3166-1, upper case)' } } as const;
/** A network's labels, as the workspace wrote them (core/enrichment/networks.ts bounds them the same). */
export const networkLabelPattern = /^[\p{L}\p{N} ._:/@+-]{1,64}$/u;
const label = { kind: 'text', max: 0, text: { pattern: networkLabelPattern, describe: 'a label of 1-64 letters, digits, spaces or ._:/@+-' } } as const;

/** Interface and exporter names and classes (core/enrichment/dimensions.ts): free text of the SNMP agent or the workspace's rules. */
const interfaceText = { kind: 'text', max: 0, text: { pattern: new RegExp(`^[^\\u0000-\\u001f]{0,${maxTextValue}}$`, 'u'), describe: `a value of at most ${maxTextValue} characters` } } as const;
const interfaceSpec = (d: EnrichedDimension): DimensionSpec =>
  enrichedDimensionKind(d) === 'number' ? { kind: 'number', max: uint32, families: dims } : { ...interfaceText, families: dims };

export const dimensionSpecs: Readonly<Record<FlowDimension, DimensionSpec>> = {
  src_ip: { kind: 'address', max: 0, families: ['src'] },
  dst_ip: { kind: 'address', max: 0, families: ['dst'] },
  src_port: { kind: 'number', max: 65_535 },
  dst_port: { kind: 'number', max: 65_535 },
  protocol: { kind: 'protocol', max: 0, families: ['dst', 'dims'] },
  exporter: { kind: 'address', max: 0, families: dims },
  in_if: { kind: 'number', max: uint32, families: dims },
  out_if: { kind: 'number', max: uint32, families: dims },
  src_as: { kind: 'number', max: uint32, families: dims },
  dst_as: { kind: 'number', max: uint32, families: dims },
  tcp_flags: { kind: 'number', max: 0xffff },
  tos: { kind: 'number', max: 255 },
  src_country: { ...country, families: dims },
  dst_country: { ...country, families: dims },
  src_net_name: { ...label, families: dims },
  dst_net_name: { ...label, families: dims },
  src_net_role: label,
  dst_net_role: label,
  src_net_site: label,
  dst_net_site: label,
  src_net_tenant: label,
  dst_net_tenant: label,
  // Joined in when read, on the raw flows or the dimension rollups (which keep exporter, in_if and out_if).
  ...(Object.fromEntries(enrichedDimensions.map((d) => [d, interfaceSpec(d)])) as Record<EnrichedDimension, DimensionSpec>),
};

export const isFlowDimension = (name: string): name is FlowDimension => (flowDimensions as readonly string[]).includes(name);
