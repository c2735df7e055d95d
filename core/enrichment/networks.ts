import { z } from 'zod';
import { networkLabelPattern } from '../flow-dimensions';
import { parseAddressRange } from '../flow-query';
import { addressKey, type AddressKey } from './address-key';

/** At most this many networks in a workspace's document. */
export const maxNetworks = 10_000;
const label = z.string().regex(networkLabelPattern, 'letters, digits, spaces or ._:/@+- (1-64)');
const optionalLabel = z.union([z.literal(''), label]).default('');

/**
 * A workspace's own network: a prefix (IPv4 or IPv6 CIDR) and the labels its
 * addresses take, the net dimensions of core/flow-dimensions.ts. Tags are
 * kept with the document for the workspace's own use; they label no flow.
 */
export const networkSchema = z
  .object({
    prefix: z.string().max(64).refine((p) => p.includes('/') && parseAddressRange(p) !== undefined, 'an IPv4 or IPv6 prefix in CIDR notation'),
    name: label,
    role: optionalLabel,
    site: optionalLabel,
    tenant: optionalLabel,
    tags: z.array(label).max(16).default([]),
  })
  .strict();
export type Network = z.output<typeof networkSchema>;

/** The document a workspace edits whole: its networks, no prefix twice (as its first address and length). */
export const networksSchema = z
  .object({ networks: z.array(networkSchema).max(maxNetworks) })
  .strict()
  .superRefine((doc, ctx) => {
    const seen = new Map<string, number>();
    doc.networks.forEach((n, i) => {
      const key = `${parseAddressRange(n.prefix)?.first ?? ''}/${n.prefix.split('/')[1] ?? ''}`;
      const before = seen.get(key);
      if (before !== undefined) ctx.addIssue({ code: 'custom', path: ['networks', i, 'prefix'], message: `the same prefix as networks[${before}]` });
      else seen.set(key, i);
    });
  });
export type Networks = z.output<typeof networksSchema>;

/** A version of a workspace's networks; version 0, none, was never stored. */
export interface VersionedNetworks {
  version: number;
  networks: Network[];
  created_at: number;
  actor: string;
}

export const noNetworks: VersionedNetworks = { version: 0, networks: [], created_at: 0, actor: '' };

export type NetworkLabels = Pick<Network, 'name' | 'role' | 'site' | 'tenant'>;

/** An IPv4 address's network of a prefix length: the address with its host bits cleared. */
const v4Network = (ip: number, length: number) => (length === 0 ? 0 : (ip & (0xffffffff << (32 - length))) >>> 0);

/** An IPv6 address's network of a prefix length, as text a map can key by. */
function v6Network(key: Uint32Array, length: number): string {
  let text = '';
  for (let i = 0; i < 4; i++) {
    const bits = Math.min(32, Math.max(0, length - 32 * i));
    text += `${i ? ':' : ''}${v4Network(key[i]!, bits)}`;
  }
  return text;
}

/** The first address of a range as parseAddressRange spells it (eight hex groups) in four 32-bit words. */
const words = (groups: string) => {
  const hex = groups.replace(/:/g, '');
  return Uint32Array.from([0, 1, 2, 3].map((i) => parseInt(hex.slice(8 * i, 8 * i + 8), 16)));
};

/**
 * A workspace's networks, by prefix length and network: an address is looked
 * up once per length the workspace uses, longest first, so a /24 inside a
 * /16 wins for its addresses, and a lookup costs the same with ten networks
 * or ten thousand (at most 33 map reads for IPv4, 129 for IPv6).
 */
export class NetworkTable {
  private readonly v4 = new Map<number, Map<number, NetworkLabels>>();
  private readonly v6 = new Map<number, Map<string, NetworkLabels>>();
  private readonly v4Lengths: number[];
  private readonly v6Lengths: number[];
  readonly size: number;

  constructor(networks: readonly Network[]) {
    let size = 0;
    for (const n of networks) {
      const range = parseAddressRange(n.prefix);
      if (!range) continue;
      const [address = '', bits] = n.prefix.split('/');
      const labels = { name: n.name, role: n.role, site: n.site, tenant: n.tenant };
      const first = words(range.first);
      if (!address.includes(':')) {
        const length = Number(bits ?? 32);
        this.v4.set(length, (this.v4.get(length) ?? new Map<number, NetworkLabels>()).set(first[3]!, labels));
      } else {
        const length = Number(bits ?? 128);
        this.v6.set(length, (this.v6.get(length) ?? new Map<string, NetworkLabels>()).set(v6Network(first, length), labels));
      }
      size++;
    }
    this.size = size;
    this.v4Lengths = [...this.v4.keys()].sort((a, b) => b - a);
    this.v6Lengths = [...this.v6.keys()].sort((a, b) => b - a);
  }

  /** The labels of the most specific network holding an address, if any. */
  lookup(address: string | AddressKey | undefined): NetworkLabels | undefined {
    if (this.size === 0) return undefined;
    const key = typeof address === 'string' ? addressKey(address) : address;
    if (!key) return undefined;
    if ('v4' in key) {
      for (const length of this.v4Lengths) {
        const found = this.v4.get(length)!.get(v4Network(key.v4, length));
        if (found) return found;
      }
      return undefined;
    }
    for (const length of this.v6Lengths) {
      const found = this.v6.get(length)!.get(v6Network(key.v6, length));
      if (found) return found;
    }
    return undefined;
  }
}
