import type { Bucket, DestinationEntry } from './bucket';
import { addEntry } from './destination-sums';
import type { RateWindows } from './rate-window';
import { mayCross, type RateRuleBook } from './rules';
import { counterSlots, type RateFlow } from './traffic-class';
import { rateRule } from './version';

/**
 * Detector version 2's early crossings: a host's window whose running sums
 * already reach a bound of its destination's thresholds, reported before it
 * closes. A window's sums only grow as flows arrive (a counted flow is never
 * taken back, and a destination tracked in a bucket stays tracked), so such a
 * window crosses once closed, whatever flows come later: the windows reported
 * early are a subset of the closed windows that cross, and the same flows
 * still give the same set of crossing windows in any order and batching,
 * some sooner. Carpets are not reported early: a prefix stops being a carpet
 * when one of its destinations crosses on its own, which is not monotone.
 *
 * What an early report knows is what a signal's identity is made of (scope,
 * target, window end: core/detection/signals.ts); the type, the bounds crossed
 * and the rates wait for the window's close, as the attack window.
 */
export interface EarlyCrossing {
  detector_version: number;
  scope: 'host';
  target: string;
  /** The host group whose thresholds it reached ('' for the workspace's). */
  host_group: string;
  /** Event time the window ends at (exclusive). */
  window_end: number;
  rule: string;
}

/** The kept buckets of the open windows looked at, by index from `from`. */
interface Span {
  from: number;
  buckets: Array<Readonly<Bucket> | undefined>;
}

export class EarlyCrossings {
  /** Destinations reported, by window end: each (target, window end) once. */
  private readonly reported = new Map<number, Set<string>>();
  private found: EarlyCrossing[] = [];
  private readonly sums = new Float64Array(counterSlots);

  constructor(
    private readonly book: RateRuleBook,
    private readonly windows: RateWindows,
    private readonly version: number,
  ) {
  }

  private get seconds(): number {
    const { windowBuckets, bucketMs } = this.windows.settings;
    return (windowBuckets * bucketMs) / 1000;
  }

  /**
   * After the flows of one add() were counted and the watermark's windows
   * closed: each destination they touched is summed in the windows still
   * open over its buckets, once their peaks say it may reach a host's bound,
   * and reported there if its sums reach one of its thresholds' bounds.
   */
  check(flows: readonly RateFlow[]): void {
    this.forgetClosed();
    const ends = this.openEnds();
    if (!ends.size) return;
    const { bucketMs, windowBuckets } = this.windows.settings;
    const span = this.spanOf(Math.min(...ends) - windowBuckets * bucketMs, Math.max(...ends));
    const checked = new Set<string>();
    for (const f of flows) {
      const at = (f.ts - (((f.ts % bucketMs) + bucketMs) % bucketMs) - span.from) / bucketMs;
      if (at < 0 || at >= span.buckets.length || !this.mayReachAround(span.buckets, at, f.dst_ip) || checked.has(f.dst_ip)) continue;
      checked.add(f.dst_ip);
      this.checkDestination(f.dst_ip, span, ends);
    }
  }

  /** The early crossings reported since the last call. */
  take(): EarlyCrossing[] {
    const out = this.found;
    this.found = [];
    return out;
  }

  /** The ends of the windows still open over the buckets the last add() touched whose buckets' peaks may reach a host's bound. */
  private openEnds(): Set<number> {
    const touched = this.windows.touched;
    const out = new Set<number>();
    if (!touched) return out;
    const { bucketMs, windowBuckets } = this.windows.settings;
    const ends = new Set<number>();
    for (const start of this.windows.bucketStarts()) {
      if (start < touched.from || start > touched.to) continue;
      for (let i = 1; i <= windowBuckets; i++) if (start + i * bucketMs > this.windows.closedTo) ends.add(start + i * bucketMs);
    }
    for (const end of ends) {
      const most = [0, 0, 0];
      for (let start = end - windowBuckets * bucketMs; start < end; start += bucketMs) {
        const peaks = this.windows.bucketAt(start)?.peaks;
        if (peaks) for (let m = 0; m < 3; m++) most[m] = most[m]! + peaks[m]!.most;
      }
      if (this.book.mayReachHost(most[0]!, most[1]!, most[2]!, this.seconds)) out.add(end);
    }
    return out;
  }

  /** The kept buckets from `from` to `to` (exclusive), by index (undefined: none kept). */
  private spanOf(from: number, to: number): Span {
    const buckets: Array<Readonly<Bucket> | undefined> = [];
    for (let start = from; start < to; start += this.windows.settings.bucketMs) buckets.push(this.windows.bucketAt(start));
    return { from, buckets };
  }

  /** Whether a destination's sums may reach a host's bound in some window over the bucket at `at`, by its buckets' peaks alone. */
  private mayReachAround(buckets: ReadonlyArray<Readonly<Bucket> | undefined>, at: number, dst: string): boolean {
    const reach = this.windows.settings.windowBuckets - 1;
    let packets = 0;
    let bytes = 0;
    let flows = 0;
    for (let i = Math.max(0, at - reach); i <= Math.min(buckets.length - 1, at + reach); i++) {
      const peaks = buckets[i]?.peaks;
      if (!peaks) continue;
      packets += peaks[0].top === dst ? peaks[0].most : peaks[0].others;
      bytes += peaks[1].top === dst ? peaks[1].most : peaks[1].others;
      flows += peaks[2].top === dst ? peaks[2].most : peaks[2].others;
    }
    return this.book.mayReachHost(packets, bytes, flows, this.seconds);
  }

  /** One destination's sums in each open window of the span, against its thresholds. */
  private checkDestination(dst: string, span: Span, ends: ReadonlySet<number>): void {
    const profile = this.book.profileOf(dst);
    if (profile.whitelisted) return;
    const { thresholds, group } = profile.judged;
    const { bucketMs, windowBuckets } = this.windows.settings;
    const entries = span.buckets.map((b) => b?.byDestination.get(dst));
    for (const end of ends) {
      if (this.reported.get(end)?.has(dst)) continue;
      const at = (end - windowBuckets * bucketMs - span.from) / bucketMs;
      if (mayCross(this.sumOf(entries, at, at + windowBuckets), this.seconds, thresholds)) this.report(dst, group, end);
    }
  }

  /** The sums of entries [from, to) (undefined: none in that bucket), in a reused array. */
  private sumOf(entries: ReadonlyArray<DestinationEntry | undefined>, from: number, to: number): Float64Array {
    const sums = this.sums.fill(0);
    for (let i = Math.max(0, from); i < Math.min(to, entries.length); i++) {
      const entry = entries[i];
      if (entry !== undefined) addEntry(sums, entry);
    }
    return sums;
  }

  private report(dst: string, group: string, end: number): void {
    let reported = this.reported.get(end);
    if (!reported) this.reported.set(end, (reported = new Set()));
    reported.add(dst);
    this.found.push({ detector_version: this.version, scope: 'host', target: dst, host_group: group, window_end: end, rule: rateRule(this.version, 'host', '', []) });
  }


  /** Windows closed since are judged as closed windows: what was reported of them is no longer needed. */
  private forgetClosed(): void {
    for (const end of this.reported.keys()) if (end <= this.windows.closedTo) this.reported.delete(end);
  }
}
