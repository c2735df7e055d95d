import { SocketAddress } from 'node:net';
import { addressBytes } from './flow-query';
import { parsePrefix, prefixWithin } from './mitigation-policy';
import { isAddressText } from './telemetry';

/**
 * Where a declared prefix stands. `pending`: declared by a workspace, acted
 * on by nothing until the platform admin approves it; `approved`: the
 * workspace's mitigations may act within it; `rejected`: refused by the
 * platform admin; `removed`: withdrawn by its workspace; `revoked`: an
 * approval the platform admin took back (the mitigation reconciler then
 * withdraws what was active within it).
 */
export const prefixStatuses = ['pending', 'approved', 'rejected', 'removed', 'revoked'] as const;
export type PrefixStatus = (typeof prefixStatuses)[number];

/** A status read back from storage; anything else is taken as `removed`, which allows nothing. */
export function prefixStatusOf(value: unknown): PrefixStatus {
  return prefixStatuses.find((s) => s === value) ?? 'removed';
}

/** Statuses in which a declaration holds a place among the workspace's prefixes (and counts towards its cap). */
export const claimingStatuses: readonly PrefixStatus[] = ['pending', 'approved'];

/**
 * A prefix a workspace may act on (issue 20): declared by the workspace,
 * approved by the platform admin. Mitigations are bounded to the approved
 * ones (core/mitigation-policy.ts `approved_prefixes`).
 */
export interface WorkspacePrefix {
  /** `pfx_…`. */
  id: string;
  org_id: string;
  /** Canonical CIDR (see canonicalPrefix). */
  prefix: string;
  description: string;
  status: PrefixStatus;
  created_at: number;
  /** The key that declared it. */
  created_by: string;
  updated_at: number;
  version: number;
}

/** The prefix lengths a workspace may declare: nothing wider than a /8 (IPv4) or a /16 (IPv6). */
export const prefixLengthBounds = { ipv4: { min: 8, max: 32 }, ipv6: { min: 16, max: 128 } } as const;

/** The most prefixes a workspace may hold pending or approved at once. */
export const maxPrefixesPerWorkspace = 256;

export type CanonicalPrefix = { prefix: string } | { error: string };

/**
 * The one text form of a prefix, so equal prefixes compare equal as strings:
 * the network address (IPv4 dotted, IPv6 compressed lower-case), `/` and the
 * length. A prefix with a host bit set is refused, naming the network it
 * probably meant, as is one wider than prefixLengthBounds allow.
 */
export function canonicalPrefix(text: string): CanonicalPrefix {
  const parsed = parsePrefix(text);
  if (!parsed || !isAddressText(parsed.address)) return { error: `${JSON.stringify(text)} is not an IPv4 or IPv6 prefix (CIDR, e.g. 192.0.2.0/24)` };
  const { family, length } = parsed;
  const network = `${networkAddress(parsed.address, family, length)}/${length}`;
  const bounds = prefixLengthBounds[family];
  if (length < bounds.min) {
    return { error: `a /${length} is wider than a workspace may declare (${family === 'ipv4' ? 'IPv4' : 'IPv6'} /${bounds.min} to /${bounds.max})` };
  }
  const asGiven = `${family === 'ipv4' ? networkAddress(parsed.address, family, 32) : new SocketAddress({ address: parsed.address, family }).address}/${length}`;
  if (asGiven !== network) return { error: `${text} is not a network address, did you mean ${network}?` };
  return { prefix: network };
}

/** Whether two prefixes share any address: one contains the other (CIDR blocks never overlap otherwise). */
export function prefixesOverlap(a: string, b: string): boolean {
  return prefixWithin(a, b) || prefixWithin(b, a);
}

/**
 * A canonical prefix's first and last address as text that sorts like the
 * addresses: the family's digit (4 or 6) and the address in hex, fixed
 * width. Two prefixes overlap exactly when each one's first is at most the
 * other's last, so storage can find overlaps with string comparisons on any
 * ClickHouse generation; the family digit keeps IPv4 and IPv6 apart.
 */
export function prefixRange(prefix: string): { first: string; last: string } {
  const parsed = parsePrefix(prefix);
  if (!parsed) throw new TypeError(`not a prefix: ${prefix}`);
  const offset = parsed.family === 'ipv4' ? 12 : 0;
  const bytes = addressBytes(parsed.address).slice(offset);
  const masks = hostMasks(bytes.length, parsed.length);
  const hex = (values: number[]) => values.map((b) => b.toString(16).padStart(2, '0')).join('');
  const tag = parsed.family === 'ipv4' ? '4' : '6';
  return {
    first: tag + hex(bytes.map((b, i) => b & ~masks[i]! & 0xff)),
    last: tag + hex(bytes.map((b, i) => b | masks[i]!)),
  };
}

/** Per byte, the bits beyond a prefix of `length` bits (the host part). */
function hostMasks(byteCount: number, length: number): number[] {
  return Array.from({ length: byteCount }, (_, i) => {
    const kept = Math.min(Math.max(length - 8 * i, 0), 8);
    return 0xff >> kept;
  });
}

function networkAddress(address: string, family: 'ipv4' | 'ipv6', length: number): string {
  const offset = family === 'ipv4' ? 12 : 0;
  const bytes = addressBytes(address).slice(offset);
  const masks = hostMasks(bytes.length, length);
  const network = bytes.map((b, i) => b & ~masks[i]! & 0xff);
  if (family === 'ipv4') return network.join('.');
  const groups = Array.from({ length: 8 }, (_, i) => ((network[2 * i]! << 8) | network[2 * i + 1]!).toString(16));
  return new SocketAddress({ address: groups.join(':'), family: 'ipv6' }).address;
}
