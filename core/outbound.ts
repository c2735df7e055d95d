import { BlockList, isIP } from 'node:net';
import { backoffDelayMs } from './backoff';

/**
 * Rules for calls the service makes to addresses its users give it (webhook
 * URLs): https only, and never to an address inside the platform's own
 * networks, unless the platform allows the host (WEBHOOK_ALLOWED_HOSTS: a
 * test's loopback receiver, an internal relay). Addresses are checked after
 * DNS resolution, every one a name resolves to.
 */
const refused = new BlockList();
for (const [net, bits] of [
  ['0.0.0.0', 8], // "this network"
  ['10.0.0.0', 8], // private
  ['100.64.0.0', 10], // carrier-grade NAT
  ['127.0.0.0', 8], // loopback
  ['169.254.0.0', 16], // link-local (cloud metadata services)
  ['172.16.0.0', 12], // private
  ['192.0.0.0', 24], // IETF protocol assignments
  ['192.168.0.0', 16], // private
  ['198.18.0.0', 15], // benchmarking
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, broadcast
] as const) refused.addSubnet(net, bits, 'ipv4');
for (const [net, bits] of [
  ['::', 96], // unspecified, loopback and the deprecated IPv4-compatible addresses (::a.b.c.d)
  ['100::', 64], // discard-only
  ['2001::', 32], // Teredo: an obfuscated IPv4 address inside, relayed
  ['2001:db8::', 32], // documentation
  ['2002::', 16], // 6to4 (deprecated, RFC 7526): an IPv4 address inside, which may be internal
  ['64:ff9b:1::', 48], // local-use NAT64
  ['fc00::', 7], // unique local
  ['fe80::', 10], // link-local
  ['fec0::', 10], // site-local (deprecated)
  ['ff00::', 8], // multicast
] as const) refused.addSubnet(net, bits, 'ipv6');

/** An IPv4 address an IPv6 one carries (mapped `::ffff:a.b.c.d`, or NAT64 `64:ff9b::a.b.c.d`), if it carries one. */
function embeddedIpv4(address: string): string | undefined {
  const m = /^(?:::ffff:|64:ff9b::)(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (m) return m[1];
  const hex = /^(?:::ffff:|64:ff9b::)([0-9a-f]{1,4}):([0-9a-f]{1,4})$/i.exec(address);
  if (!hex) return undefined;
  const [hi, lo] = [parseInt(hex[1]!, 16), parseInt(hex[2]!, 16)];
  return `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
}

/** Whether an address lies in a private, loopback, link-local, unique-local, CGNAT, multicast or reserved range. */
export function isInternalAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 4) return refused.check(address, 'ipv4');
  if (family !== 6) return true; // not an address: refuse rather than guess
  const v4 = embeddedIpv4(address);
  if (v4 !== undefined) return refused.check(v4, 'ipv4');
  return refused.check(address, 'ipv6');
}

/** The host of a URL as it is matched against the allowed hosts: lower case, IPv6 without brackets. */
export const hostOf = (url: URL) => url.hostname.toLowerCase().replace(/^\[(.*)\]$/, '$1');

/** The ports web receivers listen on: anything else is another service the URL would probe. */
const webPorts: ReadonlySet<string> = new Set(['', '443', '8443', '80', '8080']);

/** Why a URL is refused before any resolution, or undefined when its form is acceptable. */
export function urlRefusal(text: string, allowedHosts: ReadonlySet<string>): string | undefined {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return 'not a URL';
  }
  const allowed = allowedHosts.has(hostOf(url));
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && allowed)) return 'the URL must use https';
  if (url.username || url.password) return 'the URL must not carry credentials';
  if (url.hash) return 'the URL must not have a fragment';
  if (!allowed && !webPorts.has(url.port)) return 'the URL must use a web port (443, 8443, 80 or 8080)';
  return undefined;
}

export type Picked = { ok: true; address: { address: string; family: number } } | { ok: false; refusal: string };

/** The first address of a resolution that may be called, or why none may. */
export function pickAddress(host: string, addresses: ReadonlyArray<{ address: string; family: number }>, allowedHosts: ReadonlySet<string>): Picked {
  const first = addresses[0];
  if (!first) return { ok: false, refusal: `${host} does not resolve` };
  if (allowedHosts.has(host)) return { ok: true, address: first };
  // Every address must be public: a name that also resolves inside could be steered there.
  // Which address is not said: the answer would map the platform's internal names for whoever asks.
  if (addresses.some((a) => isInternalAddress(a.address))) return { ok: false, refusal: `${host} resolves to an address this service does not call` };
  return { ok: true, address: first };
}

/** Parses WEBHOOK_ALLOWED_HOSTS: comma-separated host names or addresses. */
export const allowedHostSet = (text: string) =>
  new Set(text.split(',').map((h) => h.trim().toLowerCase().replace(/^\[(.*)\]$/, '$1')).filter(Boolean));

export interface RetrySchedule {
  /** Delay after the first failed attempt. */
  baseMs: number;
  /** Longest delay between two attempts. */
  maxMs: number;
  /** How long after the first attempt the last may start. */
  giveUpAfterMs: number;
}

export const defaultRetrySchedule: RetrySchedule = { baseMs: 5_000, maxMs: 3_600_000, giveUpAfterMs: 24 * 3_600_000 };

/**
 * Delay before attempt `failed + 1`: exponential (base × 2^(failed-1)),
 * capped, with "equal jitter" (half fixed, half random) so receivers that
 * came back are not hit by every sender at once. `random` is in [0, 1).
 */
export function retryDelayMs(failed: number, schedule: RetrySchedule, random: number): number {
  const exp = backoffDelayMs({ firstMs: schedule.baseMs, maxMs: schedule.maxMs }, failed);
  return Math.round(exp / 2 + (exp / 2) * random);
}
