import { parseAddressRange } from './flow-query';
import { addressKey, type AddressKey } from './enrichment/address-key';

/** An IPv4 address's network of a prefix length: the address with its host bits cleared. */
export const v4Network = (ip: number, length: number) => (length === 0 ? 0 : (ip & (0xffffffff << (32 - length))) >>> 0);

/** An IPv6 address's network of a prefix length, as text a map can key by (four decimal words). */
export function v6Network(key: Uint32Array, length: number): string {
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
 * Values by prefix, looked up by address with the most specific prefix
 * winning: an address is looked up once per length the table uses, longest
 * first, so a /24 inside a /16 wins for its addresses, and a lookup costs
 * the same with ten prefixes or ten thousand (at most 33 map reads for
 * IPv4, 129 for IPv6). IPv4-mapped IPv6 addresses are looked up as IPv4.
 * Entries whose prefix does not parse are left out; of two equal prefixes,
 * the later wins.
 */
export class PrefixTable<T> {
  private readonly v4 = new Map<number, Map<number, T>>();
  private readonly v6 = new Map<number, Map<string, T>>();
  private readonly v4Lengths: number[];
  private readonly v6Lengths: number[];
  readonly size: number;

  constructor(entries: ReadonlyArray<{ prefix: string; value: T }>) {
    let size = 0;
    for (const { prefix, value } of entries) {
      const range = parseAddressRange(prefix);
      if (!range) continue;
      const [address = '', bits] = prefix.split('/');
      const first = words(range.first);
      if (!address.includes(':')) {
        const length = Number(bits ?? 32);
        this.v4.set(length, (this.v4.get(length) ?? new Map<number, T>()).set(first[3]!, value));
      } else {
        const length = Number(bits ?? 128);
        this.v6.set(length, (this.v6.get(length) ?? new Map<string, T>()).set(v6Network(first, length), value));
      }
      size++;
    }
    this.size = size;
    this.v4Lengths = [...this.v4.keys()].sort((a, b) => b - a);
    this.v6Lengths = [...this.v6.keys()].sort((a, b) => b - a);
  }

  /** The value of the most specific prefix holding an address, if any. */
  lookup(address: string | AddressKey | undefined): T | undefined {
    if (this.size === 0) return undefined;
    const key = typeof address === 'string' ? addressKey(address) : address;
    if (!key) return undefined;
    if ('v4' in key) {
      for (const length of this.v4Lengths) {
        const found = this.v4.get(length)!.get(v4Network(key.v4, length));
        if (found !== undefined) return found;
      }
      return undefined;
    }
    for (const length of this.v6Lengths) {
      const found = this.v6.get(length)!.get(v6Network(key.v6, length));
      if (found !== undefined) return found;
    }
    return undefined;
  }
}

const v4Text = (n: number) => `${n >>> 24}.${(n >>> 16) & 0xff}.${(n >>> 8) & 0xff}.${n & 0xff}`;

/** IPv6 words as compressed lower-case text (RFC 5952: the longest run of two or more zero groups becomes `::`). */
function v6Text(w: Uint32Array): string {
  const groups = Array.from({ length: 8 }, (_, i) => (i % 2 === 0 ? w[i / 2]! >>> 16 : w[(i - 1) / 2]! & 0xffff));
  let best = { at: -1, length: 1 };
  for (let i = 0; i < 8; ) {
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i > best.length) best = { at: i, length: j - i };
    i = j === i ? i + 1 : j;
  }
  const hex = groups.map((g) => g.toString(16));
  if (best.at < 0) return hex.join(':');
  return `${hex.slice(0, best.at).join(':')}::${hex.slice(best.at + best.length).join(':')}`;
}

/**
 * The prefix of a length (IPv4 or IPv6 by the address's family) that holds
 * an address, in canonical CIDR text (`192.0.2.0/24`, `2001:db8::/64`), or
 * undefined when the text is not an address. An IPv4-mapped IPv6 address
 * counts as IPv4.
 */
export function prefixOfAddress(address: string, v4Length: number, v6Length: number): string | undefined {
  const key = addressKey(address);
  if (!key) return undefined;
  if ('v4' in key) return `${v4Text(v4Network(key.v4, v4Length))}/${v4Length}`;
  const network = Uint32Array.from([0, 1, 2, 3].map((i) => v4Network(key.v6[i]!, Math.min(32, Math.max(0, v6Length - 32 * i)))));
  return `${v6Text(network)}/${v6Length}`;
}

/** An address as its host prefix: a /32 for IPv4, a /128 for IPv6 (canonical text). */
export const hostPrefix = (address: string): string | undefined => prefixOfAddress(address, 32, 128);
