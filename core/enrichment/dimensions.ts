/**
 * The flow dimensions interface enrichment adds: resolved when read, by
 * joining flows (their exporter address and interface numbers) with the
 * interface and exporter rows of the workspace (storage/enrichment/
 * interface-join.ts). Each is a column of that join, under its own name.
 */
const interfaceColumns = {
  name: 'name',
  description: 'description',
  speed: 'speed',
  boundary: 'boundary',
  connectivity: 'connectivity',
  provider: 'provider',
} as const;

/** The columns of exporter_interfaces, by the suffix of their dimension (in_if_<suffix>, out_if_<suffix>). */
export const interfaceDimensionColumns: Readonly<Record<keyof typeof interfaceColumns, string>> = interfaceColumns;

export const inInterfaceDimensions = ['in_if_name', 'in_if_description', 'in_if_speed', 'in_if_boundary', 'in_if_connectivity', 'in_if_provider'] as const;
export const outInterfaceDimensions = ['out_if_name', 'out_if_description', 'out_if_speed', 'out_if_boundary', 'out_if_connectivity', 'out_if_provider'] as const;
/** Columns of exporter_classes, each named as its dimension. */
export const exporterDimensions = ['exporter_name', 'exporter_group', 'exporter_role', 'exporter_site', 'exporter_region'] as const;

export const enrichedDimensions = [...inInterfaceDimensions, ...outInterfaceDimensions, ...exporterDimensions] as const;
export type EnrichedDimension = (typeof enrichedDimensions)[number];

export const isEnrichedDimension = (name: string): name is EnrichedDimension => (enrichedDimensions as readonly string[]).includes(name);

/** Interface speeds are numbers (Mbit/s); every other enriched dimension is text. */
export const enrichedDimensionKind = (d: EnrichedDimension): 'number' | 'text' => (d.endsWith('_speed') ? 'number' : 'text');

/** The longest text value a filter on an enriched dimension takes. */
export const maxTextValue = 255;
