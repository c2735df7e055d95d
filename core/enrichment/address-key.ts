import { addressBytes } from '../flow-query';
import { ipv4Number } from '../ipv4-text';

/**
 * Addresses as the numbers the range tables compare: an IPv4 address as one
 * unsigned 32-bit number, an IPv6 one as four. IPv4-mapped IPv6
 * (`::ffff:a.b.c.d`) is looked up as the IPv4 address it maps. IPv4 text,
 * the common case on the ingest path, is read by core/ipv4-text.ts.
 */
export type AddressKey = { v4: number } | { v6: Uint32Array };

const hexValue = (c: number) => (c >= 48 && c <= 57 ? c - 48 : c >= 97 && c <= 102 ? c - 87 : c >= 65 && c <= 70 ? c - 55 : -1);

/**
 * IPv6 text without an embedded IPv4 tail into eight 16-bit groups, scanned
 * by hand (the generic parser costs some 50 times more); false when the
 * text is not one.
 */
function ipv6Groups(text: string, groups: Uint16Array): boolean {
  let count = 0;
  let gap = -1;
  let value = 0;
  let digits = 0;
  for (let i = 0; i <= text.length; i++) {
    const c = i < text.length ? text.charCodeAt(i) : 58;
    if (c === 58) {
      if (digits === 0) {
        // An empty group is allowed only as one '::' (or the text's own start or end beside it).
        if (i === text.length) {
          if (gap !== count) return false;
          break;
        }
        if (i === 0) {
          if (text.charCodeAt(1) !== 58) return false;
          continue;
        }
        if (gap !== -1 || (i > 0 && text.charCodeAt(i - 1) !== 58)) return false;
        gap = count;
        continue;
      }
      if (count === 8) return false;
      groups[count++] = value;
      value = 0;
      digits = 0;
      continue;
    }
    const h = hexValue(c);
    if (h < 0 || digits === 4) return false;
    value = value * 16 + h;
    digits++;
  }
  if (gap === -1) return count === 8;
  if (count > 7) return false;
  const tail = count - gap;
  for (let i = 0; i < tail; i++) groups[7 - i] = groups[count - 1 - i]!;
  for (let i = gap; i < 8 - tail; i++) groups[i] = 0;
  return true;
}

const scratch = new Uint16Array(8);

/** The key of an address text (one that passes core/telemetry's isAddressText), or undefined for anything else. */
export function addressKey(text: string): AddressKey | undefined {
  if (!text.includes(':')) {
    const v4 = ipv4Number(text);
    return v4 < 0 ? undefined : { v4 };
  }
  if (!text.includes('.')) {
    if (!ipv6Groups(text, scratch)) return undefined;
    const words = new Uint32Array(4);
    for (let i = 0; i < 4; i++) words[i] = ((scratch[2 * i]! << 16) | scratch[2 * i + 1]!) >>> 0;
    if (words[0] === 0 && words[1] === 0 && words[2] === 0xffff) return { v4: words[3]! };
    return { v6: words };
  }
  const bytes = addressBytes(text);
  if (bytes.length !== 16 || bytes.some((b) => !(b >= 0 && b <= 255))) return undefined;
  const words = new Uint32Array(4);
  for (let i = 0; i < 4; i++) words[i] = ((bytes[4 * i]! << 24) | (bytes[4 * i + 1]! << 16) | (bytes[4 * i + 2]! << 8) | bytes[4 * i + 3]!) >>> 0;
  if (words[0] === 0 && words[1] === 0 && words[2] === 0xffff) return { v4: words[3]! };
  return { v6: words };
}
