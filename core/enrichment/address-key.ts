import { addressBytes } from '../flow-query';

/**
 * Addresses as the numbers the range tables compare: an IPv4 address as one
 * unsigned 32-bit number, an IPv6 one as four. IPv4-mapped IPv6
 * (`::ffff:a.b.c.d`) is looked up as the IPv4 address it maps. Written by
 * hand for IPv4, the common case on the ingest path (no split, no array).
 */
export type AddressKey = { v4: number } | { v6: Uint32Array };

/** An IPv4 address in dotted text as a number, or -1 when the text is not one. */
export function ipv4Number(text: string): number {
  let value = 0;
  let octet = 0;
  let digits = 0;
  let dots = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 46) {
      if (digits === 0 || ++dots > 3) return -1;
      value = value * 256 + octet;
      octet = 0;
      digits = 0;
    } else if (c >= 48 && c <= 57 && digits < 3) {
      octet = octet * 10 + (c - 48);
      if (octet > 255) return -1;
      digits++;
    } else return -1;
  }
  return dots === 3 && digits > 0 ? value * 256 + octet : -1;
}

/** The key of an address text (one that passes core/telemetry's isAddressText), or undefined for anything else. */
export function addressKey(text: string): AddressKey | undefined {
  if (!text.includes(':')) {
    const v4 = ipv4Number(text);
    return v4 < 0 ? undefined : { v4 };
  }
  const bytes = addressBytes(text);
  if (bytes.length !== 16 || bytes.some((b) => !(b >= 0 && b <= 255))) return undefined;
  const words = new Uint32Array(4);
  for (let i = 0; i < 4; i++) words[i] = ((bytes[4 * i]! << 24) | (bytes[4 * i + 1]! << 16) | (bytes[4 * i + 2]! << 8) | bytes[4 * i + 3]!) >>> 0;
  if (words[0] === 0 && words[1] === 0 && words[2] === 0xffff) return { v4: words[3]! };
  return { v6: words };
}
