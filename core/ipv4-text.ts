/**
 * An IPv4 address in dotted-quad text as its unsigned 32-bit number, or -1
 * when the text is not one as node:net's isIPv4 reads it: four decimal
 * numbers 0-255, no leading zero (`01` is refused: some parsers read it as
 * octal), nothing else. The one scanner of IPv4 text: the ingest's address
 * rule, the address keys of enrichment and the address databases' files all
 * read it. By hand, one pass over the characters: net.isIPv4 runs a regular
 * expression, which was 2 % of the ingest's main thread (every flow's two
 * addresses, at ingest and again in the detectors' reading of each digest:
 * bench/results/2026-11-30-e2e-main-thread.md).
 */
export function ipv4Number(text: string): number {
  const length = text.length;
  if (length < 7 || length > 15) return -1;
  let value = 0;
  let octet = 0;
  let digits = 0;
  let dots = 0;
  for (let i = 0; i < length; i += 1) {
    const c = text.charCodeAt(i);
    if (c === 0x2e) {
      if (digits === 0 || ++dots > 3) return -1;
      value = value * 256 + octet;
      octet = 0;
      digits = 0;
      continue;
    }
    const digit = c - 0x30;
    if (digit < 0 || digit > 9 || digits === 3 || (digits === 1 && octet === 0)) return -1;
    octet = octet * 10 + digit;
    if (octet > 255) return -1;
    digits += 1;
  }
  return dots === 3 && digits > 0 ? value * 256 + octet : -1;
}

/** Whether `s` is dotted-quad IPv4 text as node:net's isIPv4 reads it (ipv4Number). */
export const isIPv4Text = (s: string): boolean => ipv4Number(s) >= 0;
