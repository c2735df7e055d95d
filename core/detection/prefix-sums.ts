import { addEntry } from './destination-sums';
import type { Bucket, PrefixPart } from './bucket';
import { counterSlots } from './traffic-class';

/**
 * The carpet detector's sums: a prefix's traffic over a window, whatever
 * its destinations. Each closed bucket is summed by prefix once (a bucket no
 * longer changes once closed), and a window adds up its buckets' sums: a
 * destination is visited once a bucket, not once in every window over it.
 * Sums of whole numbers, exact in any order.
 */
/** A prefix's sums over one window, and its destinations in each of the window's buckets. */
export interface PrefixWindow {
  counters: Float64Array;
  destinations: Array<readonly string[]>;
}

/** The carpet prefix a destination's traffic sums into; undefined: none (a whitelisted destination, or text that is no address). */
export type PrefixOf = (dst: string) => string | undefined;

/** A closed bucket's sums by prefix, made at the first window that reads it and kept with it. */
function partsOf(bucket: Bucket, prefixOf: PrefixOf): Map<string, PrefixPart> {
  if (bucket.prefixes) return bucket.prefixes;
  const parts = new Map<string, PrefixPart>();
  for (const [dst, entry] of bucket.byDestination) {
    const prefix = prefixOf(dst);
    if (prefix === undefined) continue;
    let part = parts.get(prefix);
    if (!part) parts.set(prefix, (part = { counters: new Float64Array(counterSlots), destinations: [] }));
    addEntry(part.counters, entry);
    part.destinations.push(dst);
  }
  bucket.prefixes = parts;
  return parts;
}

/** The sums by prefix of a window's buckets, all closed. */
export function prefixSums(buckets: readonly Bucket[], prefixOf: PrefixOf): Map<string, PrefixWindow> {
  const out = new Map<string, PrefixWindow>();
  for (const bucket of buckets) {
    for (const [prefix, part] of partsOf(bucket, prefixOf)) {
      const sum = out.get(prefix);
      if (!sum) out.set(prefix, { counters: Float64Array.from(part.counters), destinations: [part.destinations] });
      else {
        for (let k = 0; k < counterSlots; k++) sum.counters[k] = sum.counters[k]! + part.counters[k]!;
        sum.destinations.push(part.destinations);
      }
    }
  }
  return out;
}

/** The prefix's destinations with traffic in the window: asked only of a prefix whose sums reach a carpet bound. */
export function addressesIn(p: PrefixWindow): number {
  if (p.destinations.length === 1) return p.destinations[0]!.length;
  const seen = new Set<string>();
  for (const list of p.destinations) for (const dst of list) seen.add(dst);
  return seen.size;
}
