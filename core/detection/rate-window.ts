import { addFlow, counterSlots, type RateFlow } from './traffic-class';

/**
 * Per-destination counters over a sliding window of event time: 1-second
 * buckets, judged over the last 5 (a 5-second moving average, as
 * FastNetMon's), the rates always divided by the whole window's seconds.
 *
 * Determinism (the rule): a bucket closes once the watermark, the newest
 * event time seen less `latenessMs`, reaches its end; a window is reported
 * for each closed bucket, over it and the buckets before it, all closed, so
 * its sums no longer change. A flow whose bucket has already closed when it
 * arrives is late: left out and counted in `late`. Hence the same flows in
 * any order and batching give the same windows as long as no flow arrives
 * more than `latenessMs` behind the newest event time seen before it;
 * `flush()` closes every bucket (a replay's end).
 *
 * Memory: only the buckets a future window still reads are kept (the open
 * ones and the window's last closed ones), and a bucket tracks at most
 * `maxDestinations` destinations: a flow to one more is counted in the
 * bucket's `untracked` flows only, and every window over that bucket says
 * `saturated` (its destinations may be missing some, so determinism is not
 * promised for it).
 */
export interface WindowSettings {
  bucketMs: number;
  windowBuckets: number;
  latenessMs: number;
  maxDestinations: number;
}

export const defaultWindowSettings: WindowSettings = { bucketMs: 1000, windowBuckets: 5, latenessMs: 5000, maxDestinations: 100_000 };

/**
 * A destination's traffic in a bucket: its only flow so far, or the counters
 * of its flows once it has two. Most destinations of a busy workspace see
 * one flow a second; their counters (36 numbers) are made only if a window
 * over the bucket may matter (windowAt), which is rare.
 */
export type DestinationEntry = RateFlow | Float64Array;

export interface Bucket {
  byDestination: Map<string, DestinationEntry>;
  /** Every counted flow of the bucket, whatever its destination. */
  total: Float64Array;
  untracked: number;
  /** The peaks of the destinations' total packets, bytes and flows in the bucket, in that order. */
  peaks: readonly [Peak, Peak, Peak];
}

/**
 * The most one destination has of a measure in a bucket, which one, and the
 * most any other has (at least). A destination's sum over a window is at
 * most the sum over its buckets of `most` where it is `top` and `others`
 * elsewhere, so a window, or a destination, that cannot reach a bound need
 * not be summed (early-crossings.ts). Sums only grow: the bounds hold.
 */
export interface Peak {
  top: string;
  most: number;
  others: number;
}

/** One closed window: the sums of its buckets per destination (read only: a sum may be a bucket's own counters). */
export interface ClosedWindow {
  /** Event time the window ends at (exclusive): its last bucket's end. */
  end: number;
  seconds: number;
  byDestination: Map<string, Float64Array>;
  saturated: boolean;
}

export class RateWindows {
  private readonly buckets = new Map<number, Bucket>();
  private newest = Number.NEGATIVE_INFINITY;
  /** Start of the last bucket closed; flows in it or before it are late. */
  private closedThrough = Number.NEGATIVE_INFINITY;
  late = 0;
  untracked = 0;
  /** The first and last bucket starts the last add() counted a flow in (undefined: none). */
  touched: { from: number; to: number } | undefined;

  constructor(
    readonly settings: WindowSettings = defaultWindowSettings,
    /** Flows it leaves out before counting (a whitelisted source). */
    private readonly skip: (f: RateFlow) => boolean = () => false,
    /**
     * Whether a window's whole traffic may break some bound (RateRuleBook.mayAnyCross): a window
     * that may not is closed without its per-destination sums, since none of them could decide anything.
     */
    private readonly mayMatter: (total: Float64Array, seconds: number) => boolean = () => true,
  ) {}

  /** Event time every window ending at or before which is closed (judged, or empty): the end of the last closed bucket. */
  get closedTo(): number {
    return this.closedThrough + this.settings.bucketMs;
  }

  private startOf = (ts: number) => ts - (((ts % this.settings.bucketMs) + this.settings.bucketMs) % this.settings.bucketMs);

  add(flows: Iterable<RateFlow>): void {
    let from = Number.POSITIVE_INFINITY;
    let to = Number.NEGATIVE_INFINITY;
    for (const f of flows) {
      const start = this.startOf(f.ts);
      if (start <= this.closedThrough) {
        this.late += 1;
        continue;
      }
      this.newest = Math.max(this.newest, f.ts);
      if (this.skip(f)) continue;
      let bucket = this.buckets.get(start);
      if (!bucket) this.buckets.set(start, (bucket = newBucket()));
      const entry = bucket.byDestination.get(f.dst_ip);
      if (entry === undefined) {
        if (bucket.byDestination.size >= this.settings.maxDestinations) {
          bucket.untracked += 1;
          this.untracked += 1;
          continue;
        }
        bucket.byDestination.set(f.dst_ip, f);
        raisePeaks(bucket, f.dst_ip, f.packets, f.bytes, 1);
      } else if (entry instanceof Float64Array) {
        addFlow(entry, f);
        raisePeaks(bucket, f.dst_ip, entry[0]!, entry[1]!, entry[2]!);
      } else {
        const counters = setIn(bucket.byDestination, f.dst_ip, countersOf(entry, f));
        raisePeaks(bucket, f.dst_ip, counters[0]!, counters[1]!, counters[2]!);
      }
      addFlow(bucket.total, f);
      if (start < from) from = start;
      if (start > to) to = start;
    }
    this.touched = from <= to ? { from, to } : undefined;
  }

  /** A kept bucket by its start, read only (early-crossings.ts reads the running sums of open windows). */
  bucketAt(start: number): Readonly<Bucket> | undefined {
    return this.buckets.get(start);
  }

  /** The starts of the buckets kept, in no order. */
  bucketStarts(): IterableIterator<number> {
    return this.buckets.keys();
  }

  /** Closes the buckets the watermark has passed and returns their windows, oldest first. */
  advance(): ClosedWindow[] {
    return this.closeThrough(this.newest - this.settings.latenessMs);
  }

  /** Closes every bucket (no more flows will come) and returns their windows. */
  flush(): ClosedWindow[] {
    const last = Math.max(this.newest, ...this.buckets.keys());
    return this.closeThrough(last + this.settings.bucketMs * this.settings.windowBuckets);
  }

  /** The buckets, ending at or before `watermark`, whose window holds some traffic: each kept bucket closes the windows of itself and the next buckets. */
  private closeThrough(watermark: number): ClosedWindow[] {
    const { bucketMs, windowBuckets } = this.settings;
    const ends = new Set<number>();
    for (const start of this.buckets.keys()) {
      for (let i = 0; i < windowBuckets; i++) {
        const s = start + i * bucketMs;
        if (s > this.closedThrough && s + bucketMs <= watermark) ends.add(s);
      }
    }
    const out = [...ends].sort((a, b) => a - b).map((s) => this.windowAt(s));
    const lastClosed = Math.max(this.closedThrough, this.startOf(watermark) - bucketMs);
    if (Number.isFinite(lastClosed)) this.closedThrough = lastClosed;
    for (const start of [...this.buckets.keys()]) if (start <= this.closedThrough - (windowBuckets - 1) * bucketMs) this.buckets.delete(start);
    return out;
  }

  /** The window's buckets, oldest first, and whether any dropped destinations. */
  private bucketsOf(lastStart: number): { buckets: Bucket[]; saturated: boolean } {
    const { bucketMs, windowBuckets } = this.settings;
    const buckets: Bucket[] = [];
    for (let i = windowBuckets - 1; i >= 0; i--) {
      const bucket = this.buckets.get(lastStart - i * bucketMs);
      if (bucket) buckets.push(bucket);
    }
    return { buckets, saturated: buckets.some((b) => b.untracked > 0) };
  }

  /**
   * A window's sums per destination. A destination in one bucket of the
   * window only takes that bucket's counters as they are (no copy: windows
   * are read, never written, and a closed bucket no longer changes); one
   * with a single flow, or in several buckets, gets counters of its own. A window whose whole traffic may matter to
   * no bound holds no destination (mayMatter): the sums could decide nothing.
   */
  private windowAt(lastStart: number): ClosedWindow {
    const { bucketMs, windowBuckets } = this.settings;
    const seconds = (windowBuckets * bucketMs) / 1000;
    const end = lastStart + bucketMs;
    const byDestination = new Map<string, Float64Array>();
    const { buckets, saturated } = this.bucketsOf(lastStart);
    const total = new Float64Array(counterSlots);
    for (const bucket of buckets) for (let k = 0; k < counterSlots; k++) total[k] = total[k]! + bucket.total[k]!;
    if (!this.mayMatter(total, seconds)) return { end, seconds, byDestination, saturated };
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
        if (entry instanceof Float64Array) for (let k = 0; k < counterSlots; k++) sum[k] = sum[k]! + entry[k]!;
        else addFlow(sum, entry);
      }
    }
    return { end, seconds, byDestination, saturated };
  }
}

const newPeak = (): Peak => ({ top: '', most: 0, others: 0 });
const newBucket = (): Bucket => ({ byDestination: new Map(), total: new Float64Array(counterSlots), untracked: 0, peaks: [newPeak(), newPeak(), newPeak()] });

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
function raisePeaks(bucket: Bucket, dst: string, packets: number, bytes: number, flows: number): void {
  raise(bucket.peaks[0], dst, packets);
  raise(bucket.peaks[1], dst, bytes);
  raise(bucket.peaks[2], dst, flows);
}

/** New counters holding the flows given. */
function countersOf(...flows: RateFlow[]): Float64Array {
  const counters = new Float64Array(counterSlots);
  for (const f of flows) addFlow(counters, f);
  return counters;
}

const setIn = (map: Map<string, DestinationEntry>, key: string, value: Float64Array) => (map.set(key, value), value);
