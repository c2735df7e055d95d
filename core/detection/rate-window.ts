import { countersOf, setIn, sumsOf, sumsOfAll } from './destination-sums';
import { newBucket, raisePeaks, type Bucket } from './bucket';
import { prefixSums, type PrefixOf, type PrefixWindow } from './prefix-sums';
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
 *
 * Cost: a busy workspace sends a few flows a second to each of many
 * destinations, nearly all far below every bound. A closed window sums only
 * the destinations that may reach a host's bound (by the buckets' peaks:
 * every other is ruled out at once), and the carpet detector reads each
 * bucket's sums by prefix (prefix-sums.ts), so a destination is visited once
 * a bucket, not in each of the five windows over it.
 */
export interface WindowSettings {
  bucketMs: number;
  windowBuckets: number;
  latenessMs: number;
  maxDestinations: number;
}

export const defaultWindowSettings: WindowSettings = { bucketMs: 1000, windowBuckets: 5, latenessMs: 5000, maxDestinations: 100_000 };

/** One closed window (read only: a sum may be a bucket's own counters). */
export interface ClosedWindow {
  /** Event time the window ends at (exclusive): its last bucket's end. */
  end: number;
  seconds: number;
  /** The sums of each destination that may reach a host's bound: every destination, unless the buckets' peaks rule the others out. */
  byDestination: Map<string, Float64Array>;
  /** The sums of each carpet prefix with traffic in the window. */
  prefixes: Map<string, PrefixWindow>;
  saturated: boolean;
}

/** What windows need of the rules (RateRuleBook gives each); by default every flow counts and every window holds every destination. */
export interface WindowBounds {
  /** Flows left out before counting (a whitelisted source). */
  skip(f: RateFlow): boolean;
  /**
   * Whether a window's whole traffic may break any bound (RateRuleBook.mayAnyCross): a window
   * that may not is closed without sums, since none of them could decide anything.
   */
  mayMatter(total: Float64Array, seconds: number): boolean;
  /** Whether a destination's total packets, bytes and flows over a window may reach a host's bound (RateRuleBook.mayReachHost). */
  mayReachHost(packets: number, bytes: number, flows: number, seconds: number): boolean;
  prefixOf: PrefixOf;
}

const countEverything: WindowBounds = { skip: () => false, mayMatter: () => true, mayReachHost: () => true, prefixOf: () => undefined };

export class RateWindows {
  private readonly buckets = new Map<number, Bucket>();
  private newest = Number.NEGATIVE_INFINITY;
  /** Start of the last bucket closed; flows in it or before it are late. */
  private closedThrough = Number.NEGATIVE_INFINITY;
  late = 0;
  untracked = 0;
  /** The first and last bucket starts the last add() counted a flow in (undefined: none). */
  touched: { from: number; to: number } | undefined;

  private readonly bounds: WindowBounds;

  constructor(
    readonly settings: WindowSettings = defaultWindowSettings,
    bounds: Partial<WindowBounds> = {},
  ) {
    this.bounds = { ...countEverything, ...bounds };
  }

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
      if (this.bounds.skip(f)) continue;
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
   * A window's sums. A destination in one bucket of the window only takes
   * that bucket's counters as they are (no copy: windows are read, never
   * written, and a closed bucket no longer changes); one with a single flow,
   * or in several buckets, gets counters of its own. A window whose whole
   * traffic may matter to no bound holds no sums (mayMatter): they could
   * decide nothing.
   */
  private windowAt(lastStart: number): ClosedWindow {
    const { bucketMs, windowBuckets } = this.settings;
    const seconds = (windowBuckets * bucketMs) / 1000;
    const end = lastStart + bucketMs;
    const { buckets, saturated } = this.bucketsOf(lastStart);
    const total = new Float64Array(counterSlots);
    for (const bucket of buckets) for (let k = 0; k < counterSlots; k++) total[k] = total[k]! + bucket.total[k]!;
    if (!this.bounds.mayMatter(total, seconds)) return { end, seconds, byDestination: new Map(), prefixes: new Map(), saturated };
    const candidates = this.hostCandidates(buckets, seconds);
    const byDestination = candidates ? sumsOf(buckets, candidates) : sumsOfAll(buckets);
    return { end, seconds, byDestination, prefixes: prefixSums(buckets, this.bounds.prefixOf), saturated };
  }

  /**
   * The destinations that may reach a host's bound in the window, when its
   * buckets' peaks rule out every other; undefined when they do not. One
   * that is no bucket's top in any measure has at most the bucket's
   * `others` there, so its sums are at most the sums of the `others`.
   */
  private hostCandidates(buckets: readonly Bucket[], seconds: number): Set<string> | undefined {
    let packets = 0;
    let bytes = 0;
    let flows = 0;
    const tops = new Set<string>();
    for (const { peaks } of buckets) {
      packets += peaks[0].others;
      bytes += peaks[1].others;
      flows += peaks[2].others;
      for (const peak of peaks) if (peak.top) tops.add(peak.top);
    }
    return this.bounds.mayReachHost(packets, bytes, flows, seconds) ? undefined : tops;
  }
}
