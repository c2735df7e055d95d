import { SocketAddress } from 'node:net';
import { isAddressText } from './telemetry';

/**
 * A flow exporter (a router or switch that sends NetFlow/IPFIX/sFlow) a
 * workspace registered: datagrams from its address will belong to that
 * workspace. An address belongs to at most one workspace at a time.
 */
export interface Exporter {
  org_id: string;
  id: string;
  /** The normalized address text (see normalizeAddress). */
  address: string;
  name: string;
  /** 1 in N packets sampled; 0 when none is registered (the collector then trusts the datagrams). */
  sampling_rate: number;
  status: 'active' | 'deleted';
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
