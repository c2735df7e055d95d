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

interface CompiledNetwork {
  v4: boolean;
  first: Uint32Array;
  last: Uint32Array;
  length: number;
  labels: NetworkLabels;
}

const words = (groups: string) => {
  const hex = groups.replace(/:/g, '');
  return Uint32Array.from([0, 1, 2, 3].map((i) => parseInt(hex.slice(8 * i, 8 * i + 8), 16)));
};

const within = (n: CompiledNetwork, key: Uint32Array) => {
  for (let i = 0; i < 4; i++) {
    if (key[i]! < n.first[i]!) return false;
    if (key[i]! > n.first[i]!) break;
  }
  for (let i = 0; i < 4; i++) {
    if (key[i]! > n.last[i]!) return false;
    if (key[i]! < n.last[i]!) break;
  }
  return true;
};

/**
 * A workspace's networks, most specific first: the first that holds an
 * address labels it, so a /24 inside a /16 wins for its addresses. A
 * workspace holds tens to a few thousand prefixes, and a flow's two
 * addresses scan them once each.
 */
export class NetworkTable {
  private readonly networks: CompiledNetwork[];

  constructor(networks: readonly Network[]) {
    this.networks = networks
      .flatMap((n): CompiledNetwork[] => {
        const range = parseAddressRange(n.prefix);
        if (!range) return [];
        const v4 = !n.prefix.split('/')[0]!.includes(':');
        const length = Number(n.prefix.split('/')[1] ?? (v4 ? 32 : 128)) + (v4 ? 96 : 0);
        return [{ v4, first: words(range.first), last: words(range.last), length, labels: { name: n.name, role: n.role, site: n.site, tenant: n.tenant } }];
      })
      .sort((a, b) => b.length - a.length);
  }

  get size(): number {
    return this.networks.length;
  }

  /** The labels of the most specific network holding an address, if any. */
  lookup(address: string | AddressKey | undefined): NetworkLabels | undefined {
    if (this.networks.length === 0) return undefined;
    const key = typeof address === 'string' ? addressKey(address) : address;
    if (!key) return undefined;
    if ('v4' in key) {
      // IPv4 networks compare as one number: no array per lookup on the common path.
      const ip = key.v4;
      for (const n of this.networks) if (n.v4 && ip >= n.first[3]! && ip <= n.last[3]!) return n.labels;
      return undefined;
    }
    for (const n of this.networks) if (!n.v4 && within(n, key.v6)) return n.labels;
    return undefined;
  }
}
