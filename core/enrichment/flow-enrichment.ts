import { enrichmentRowFields, type FlowInput } from '../flow';
import { addressKey, type AddressKey } from './address-key';
import type { NetworkLabels, NetworkTable } from './networks';

/**
 * What the address databases answer for one address: its AS number (0 when
 * none knows it) and its country as an ISO 3166-1 alpha-2 code ('' when none
 * knows it). `version` is the id of the databases in use, stored with every
 * flow they enriched (table `enrichment_versions`).
 */
export interface AddressDatabases {
  readonly version: number;
  /** `key` is the address parsed (addressKey), when the caller has it: the range tables read it, so an address is parsed once for every lookup. */
  asOf(address: string, key?: AddressKey): number;
  countryOf(address: string, key?: AddressKey): string;
}

/** The stored fields enrichment adds to a flow (docs/enrichment.md). */
export interface FlowEnrichment {
  src_as?: number;
  dst_as?: number;
  src_country?: string;
  dst_country?: string;
  src_net_name?: string;
  src_net_role?: string;
  src_net_site?: string;
  src_net_tenant?: string;
  dst_net_name?: string;
  dst_net_role?: string;
  dst_net_site?: string;
  dst_net_tenant?: string;
  enrichment_version: number;
}

function labelled(out: FlowEnrichment, side: 'src' | 'dst', labels: NetworkLabels | undefined): void {
  if (!labels) return;
  if (labels.name) out[`${side}_net_name`] = labels.name;
  if (labels.role) out[`${side}_net_role`] = labels.role;
  if (labels.site) out[`${side}_net_site`] = labels.site;
  if (labels.tenant) out[`${side}_net_tenant`] = labels.tenant;
}

/**
 * A flow's enrichment. An AS number the exporter sent wins over the
 * database (routers know their own routes); the workspace's own networks
 * label the addresses inside them; empty answers are left out, as their
 * column defaults say the same in fewer bytes.
 */
export function enrichmentOf(flow: Pick<FlowInput, 'src_ip' | 'dst_ip' | 'src_as' | 'dst_as'>, dbs: AddressDatabases, networks?: NetworkTable): FlowEnrichment {
  const out: FlowEnrichment = { enrichment_version: dbs.version };
  const srcKey = addressKey(flow.src_ip);
  const dstKey = addressKey(flow.dst_ip);
  if (flow.src_as === undefined) {
    const asn = dbs.asOf(flow.src_ip, srcKey);
    if (asn) out.src_as = asn;
  }
  if (flow.dst_as === undefined) {
    const asn = dbs.asOf(flow.dst_ip, dstKey);
    if (asn) out.dst_as = asn;
  }
  const srcCountry = dbs.countryOf(flow.src_ip, srcKey);
  if (srcCountry) out.src_country = srcCountry;
  const dstCountry = dbs.countryOf(flow.dst_ip, dstKey);
  if (dstCountry) out.dst_country = dstCountry;
  if (networks && networks.size > 0) {
    labelled(out, 'src', networks.lookup(srcKey));
    labelled(out, 'dst', networks.lookup(dstKey));
  }
  return out;
}

/**
 * The enrichment as the tail of a stored JSON line (`,"src_country":…`), to append before its closing
 * brace: the fields of core/flow.ts's enrichmentRowFields in their order, each only when known, so the
 * stream workers' row screen (core/row-shape.ts) takes the line. The AS numbers are not in it (applyEnrichment).
 */
export function enrichmentJsonTail(e: FlowEnrichment): string {
  let json = '';
  for (const [key, type] of enrichmentRowFields) {
    const value = e[key];
    if (value === undefined) continue;
    json += type === 'number' ? `,"${key}":${value as number}` : `,"${key}":${JSON.stringify(value)}`;
  }
  return json;
}

/**
 * Puts the AS numbers the databases found (only where the exporter sent none) into the flow's own
 * src_as/dst_as, where its stored row keeps them, and answers the rest as the line's tail.
 */
export function applyEnrichment(flow: FlowInput, e: FlowEnrichment): string {
  if (e.src_as !== undefined) flow.src_as = e.src_as;
  if (e.dst_as !== undefined) flow.dst_as = e.dst_as;
  return enrichmentJsonTail(e);
}

/** A country code as an MMDB record spells it: ip-location-db's `country_code`, MaxMind's `country.iso_code`, IPinfo's `country`. */
export function countryOfRecord(record: unknown): string {
  if (typeof record !== 'object' || record === null) return '';
  const r = record as { country_code?: unknown; country?: unknown; registered_country?: unknown };
  const nested = (v: unknown) => (typeof v === 'object' && v !== null ? (v as { iso_code?: unknown }).iso_code : undefined);
  const code = r.country_code ?? (typeof r.country === 'string' ? r.country : nested(r.country)) ?? nested(r.registered_country);
  return typeof code === 'string' && /^[A-Za-z]{2}$/.test(code) ? code.toUpperCase() : '';
}

/** An AS number as an MMDB record spells it: MaxMind's `autonomous_system_number`, IPinfo's `asn` ("AS13335"). */
export function asOfRecord(record: unknown): number {
  if (typeof record !== 'object' || record === null) return 0;
  const r = record as { autonomous_system_number?: unknown; asn?: unknown };
  const value = r.autonomous_system_number ?? r.asn;
  const n = typeof value === 'number' ? value : typeof value === 'string' ? Number(value.replace(/^AS/i, '')) : NaN;
  return Number.isInteger(n) && n > 0 && n <= 0xffffffff ? n : 0;
}
