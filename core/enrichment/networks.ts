import { parseAddressRange } from '../flow-query';
import { addressKey, type AddressKey } from './address-key';

/** A workspace's own network: a prefix and the labels its addresses take (core/flow-dimensions.ts's net dimensions). */
export interface Network {
  prefix: string;
  name: string;
  role: string;
  site: string;
  tenant: string;
  tags: string[];
}

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
    const full = 'v4' in key ? Uint32Array.from([0, 0, 0xffff, key.v4]) : key.v6;
    return this.networks.find((n) => within(n, full))?.labels;
  }
}
