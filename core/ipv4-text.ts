/**
 * Whether `s` is dotted-quad IPv4 text as node:net's isIPv4 reads it: four
 * decimal numbers 0-255, no leading zero (`01` is refused: some parsers read
 * it as octal), nothing else. The same rule by hand, one pass over the
 * characters: net.isIPv4 runs a regular expression, which was 2 % of the
 * ingest's main thread (every flow's two addresses, at ingest and again in
 * the detectors' reading of each digest: bench/results/2026-11-30-e2e-main-thread.md).
 */
export function isIPv4Text(s: string): boolean {
  const length = s.length;
  if (length < 7 || length > 15) return false;
  let octets = 0;
  let value = 0;
  let digits = 0;
  for (let i = 0; i <= length; i += 1) {
    const c = i === length ? 0x2e : s.charCodeAt(i);
    if (c === 0x2e) {
      if (digits === 0 || value > 255) return false;
      octets += 1;
      value = 0;
      digits = 0;
      continue;
    }
    const digit = c - 0x30;
    if (digit < 0 || digit > 9 || (digits === 1 && value === 0) || digits === 3) return false;
    value = value * 10 + digit;
    digits += 1;
  }
  return octets === 4;
}
