import { BlockList, isIP } from 'node:net';

/**
 * Which address a request comes from, for the failed-authentication
 * throttle. By default the socket's peer: a header is the client's to write.
 * Behind reverse proxies the operator names them (TRUSTED_PROXIES); then
 * X-Forwarded-For is read from the right, each hop a trusted proxy appended,
 * and the first address that is not a trusted proxy is the client. Hops left
 * of it were written by the client and are never believed.
 */
export class TrustedProxies {
  private readonly list = new BlockList();
  readonly empty: boolean;

  /** `spec`: addresses and CIDR ranges, comma-separated (`10.0.0.0/8, ::1`). */
  constructor(spec: readonly string[]) {
    for (const entry of spec) {
      const [address, bits] = entry.split('/');
      const family = isIP(address ?? '') === 6 ? 'ipv6' : 'ipv4';
      if (!isIP(address ?? '') || (bits !== undefined && !/^\d{1,3}$/.test(bits))) throw new Error(`not an address or CIDR range: ${entry}`);
      if (bits === undefined) this.list.addAddress(address!, family);
      else this.list.addSubnet(address!, Number(bits), family);
    }
    this.empty = spec.length === 0;
  }

  has(address: string): boolean {
    const family = isIP(address);
    return family !== 0 && this.list.check(address, family === 6 ? 'ipv6' : 'ipv4');
  }
}

/** `::ffff:10.0.0.1` (an IPv4 peer of a dual-stack socket) as `10.0.0.1`; IPv6 in lower case. */
export function normalizeAddress(address: string): string {
  const lower = address.trim().toLowerCase();
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(lower);
  return mapped ? mapped[1]! : lower;
}

export function clientAddress(socketAddress: string | undefined, forwardedFor: string | undefined, trusted: TrustedProxies): string {
  let address = normalizeAddress(socketAddress ?? '');
  if (trusted.empty || !forwardedFor || !trusted.has(address)) return address || 'unknown';
  const hops = forwardedFor.split(',').map(normalizeAddress);
  for (let i = hops.length - 1; i >= 0; i -= 1) {
    const hop = hops[i]!;
    // A hop that is no address was not written by a proxy we trust: the last proxy is the client we know.
    if (!isIP(hop)) return address;
    address = hop;
    if (!trusted.has(hop)) return hop;
  }
  return address;
}

/**
 * The key a client is throttled under: an IPv4 address, or the /64 of an
 * IPv6 one (one host usually holds a whole /64, and could change its address
 * for each attempt within it).
 */
export function throttleKeyOf(address: string): string {
  if (isIP(address) !== 6 || address.includes('.')) return address;
  const [head = '', tail = ''] = address.split('::');
  const left = head ? head.split(':') : [];
  const right = address.includes('::') && tail ? tail.split(':') : [];
  const groups = address.includes('::') ? [...left, ...Array<string>(8 - left.length - right.length).fill('0'), ...right] : left;
  return `${groups.slice(0, 4).map((g) => g.replace(/^0+(?=.)/, '')).join(':')}::/64`;
}
