import { counterSlots, type RateFlow } from './traffic-class';

/**
 * A destination's traffic in a bucket (a second of a workspace's traffic,
 * rate-window.ts): its only flow so far, or the counters of its flows once
 * it has two. Most destinations of a busy workspace see one flow a second;
 * their counters (36 numbers) are made only if a window over the bucket may
 * need them, which is rare.
 */
export type DestinationEntry = RateFlow | Float64Array;

export interface Bucket {
  byDestination: Map<string, DestinationEntry>;
  /** Every counted flow of the bucket, whatever its destination. */
  total: Float64Array;
  untracked: number;
  /** The peaks of the destinations' total packets, bytes and flows in the bucket, in that order. */
  peaks: readonly [Peak, Peak, Peak];
  /** Its sums by carpet prefix, once closed and read by a window (prefix-sums.ts). */
  prefixes?: Map<string, PrefixPart>;
}

/**
 * The most one destination has of a measure in a bucket, which one, and the
 * most any other has (at least). A destination's sum over a window is at
 * most the sum over its buckets of `most` where it is `top` and `others`
 * elsewhere, so a window, or a destination, that cannot reach a bound need
 * not be summed (rate-window.ts, early-crossings.ts). Sums only grow: the bounds hold.
 */
export interface Peak {
  top: string;
  most: number;
  others: number;
}

/** A carpet prefix's sums in one closed bucket (prefix-sums.ts). */
export interface PrefixPart {
  counters: Float64Array;
  /** The prefix's destinations with traffic in the bucket, each once. */
  destinations: string[];
}

const newPeak = (): Peak => ({ top: '', most: 0, others: 0 });
export const newBucket = (): Bucket => ({ byDestination: new Map(), total: new Float64Array(counterSlots), untracked: 0, peaks: [newPeak(), newPeak(), newPeak()] });

/**
 * A destination's value of a measure grew to `value`. Most values are at
 * most `others` and change nothing (were it `top`'s, `most` would be at
 * least `others` and at most `value`: equal to it), so that is asked first.
 */
function raise(peak: Peak, dst: string, value: number): void {
  if (value <= peak.others) return;
  if (peak.top === dst) peak.most = value;
  else if (value > peak.most) {
    peak.others = peak.most;
    peak.top = dst;
    peak.most = value;
  } else peak.others = value;
}

/** Raises a bucket's peaks to a destination's totals (the `total` class's packets, bytes and flows: its first three counters). */
export function raisePeaks(bucket: Bucket, dst: string, packets: number, bytes: number, flows: number): void {
  raise(bucket.peaks[0], dst, packets);
  raise(bucket.peaks[1], dst, bytes);
  raise(bucket.peaks[2], dst, flows);
}
