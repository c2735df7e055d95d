import type { Bucket, DestinationEntry } from './bucket';
import { addFlow, counterSlots, type RateFlow } from './traffic-class';

/** Adds a bucket's entry for a destination (its one flow, or its counters) to counters. */
export function addEntry(counters: Float64Array, entry: DestinationEntry): void {
  if (entry instanceof Float64Array) for (let k = 0; k < counterSlots; k++) counters[k] = counters[k]! + entry[k]!;
  else addFlow(counters, entry);
}

/** The sums of the given destinations over the buckets (each its own counters). */
export function sumsOf(buckets: readonly Bucket[], destinations: Iterable<string>): Map<string, Float64Array> {
  const out = new Map<string, Float64Array>();
  for (const dst of destinations) {
    const sum = new Float64Array(counterSlots);
    for (const bucket of buckets) {
      const entry = bucket.byDestination.get(dst);
      if (entry !== undefined) addEntry(sum, entry);
    }
    out.set(dst, sum);
  }
  return out;
}

/** The sums of every destination over the buckets; one in a single bucket with counters keeps them (no copy). */
export function sumsOfAll(buckets: readonly Bucket[]): Map<string, Float64Array> {
  const byDestination = new Map<string, Float64Array>();
  const summed = new Set<Float64Array>();
  for (const bucket of buckets) {
    for (const [dst, entry] of bucket.byDestination) {
      let sum = byDestination.get(dst);
      if (!sum) {
        if (entry instanceof Float64Array) byDestination.set(dst, entry);
        else summed.add(setIn(byDestination, dst, countersOf(entry)));
        continue;
      }
      if (!summed.has(sum)) summed.add((sum = setIn(byDestination, dst, Float64Array.from(sum))));
      addEntry(sum, entry);
    }
  }
  return byDestination;
}

/** New counters holding the flows given. */
export function countersOf(...flows: RateFlow[]): Float64Array {
  const counters = new Float64Array(counterSlots);
  for (const f of flows) addFlow(counters, f);
  return counters;
}

export const setIn = (map: Map<string, DestinationEntry>, key: string, value: Float64Array) => (map.set(key, value), value);
