import { SocketAddress } from 'node:net';
import { isAddressText } from './telemetry';

/**
 * Where a registration stands. `pending`: asked for by a workspace, routing
 * nothing until the platform admin approves it; `active`: routes its
 * address's datagrams to its workspace; `rejected`: refused by the platform
 * admin; `deleted`: removed by its workspace. Rows stored before approvals
 * existed are `active` and stay so.
 */
export const exporterStatuses = ['pending', 'active', 'rejected', 'deleted'] as const;
export type ExporterStatus = (typeof exporterStatuses)[number];

/** A status read back from storage; anything else is taken as `deleted`, which routes nothing. */
export function exporterStatusOf(value: unknown): ExporterStatus {
  return exporterStatuses.find((s) => s === value) ?? 'deleted';
}

/**
 * A flow exporter (a router or switch that sends NetFlow/IPFIX/sFlow) a
 * workspace registered: once the platform admin approved it, datagrams from
 * its address belong to that workspace. An address is active for at most one
 * workspace at a time.
 */
export interface Exporter {
  org_id: string;
  id: string;
  /** The normalized address text (see normalizeAddress). */
  address: string;
  name: string;
  /** 1 in N packets sampled; 0 when none is registered (the collector then trusts the datagrams). */
  sampling_rate: number;
  status: ExporterStatus;
  created_at: number;
  updated_at: number;
  version: number;
}

/** An address datagrams came from that no workspace registered, as the collector counted it. */
export interface UnknownExporter {
  address: string;
  /** Start of the first and the last minute datagrams were seen, epoch milliseconds. */
  first_seen: number;
  last_seen: number;
  datagrams: number;
  flows: number;
}

const mappedIpv4 = /^::ffff:(\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3})$/;

/**
 * The one text form of an address, so that equal addresses compare equal as
 * strings: IPv6 lower-case and compressed (node's own formatter), and an
 * IPv4-mapped IPv6 address (`::ffff:10.0.0.1`, `::FFFF:a00:1`) as its IPv4.
 * Only text that passes the address rule (isAddressText) is accepted.
 */
export function normalizeAddress(text: string): string {
  if (!isAddressText(text)) throw new TypeError('not an IPv4 or IPv6 address');
  if (!text.includes(':')) return new SocketAddress({ address: text, family: 'ipv4' }).address;
  const v6 = new SocketAddress({ address: text, family: 'ipv6' }).address;
  return mappedIpv4.exec(v6)?.[1] ?? v6;
}
