import type { Bucket, DestinationEntry, RateWindows } from './rate-window';
import { mayCross, rateMeasures, type RateRuleBook, type RateThresholds } from './rules';
import { addFlow, counterSlots, type RateFlow } from './traffic-class';
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

/** The least bound of each measure over thresholds, any class: every class's counters are at most the `total` class's. */
interface LeastBounds {
  pps: number;
  bps: number;
  fps: number;
}

function leastBounds(sets: readonly RateThresholds[]): LeastBounds {
  const least: LeastBounds = { pps: Infinity, bps: Infinity, fps: Infinity };
  for (const thresholds of sets) {
    for (const bounds of Object.values(thresholds)) for (const m of rateMeasures) least[m] = Math.min(least[m], bounds?.[m] ?? Infinity);
  }
  return least;
}

/** Whether total packets, bytes and flows over a window of `seconds` may reach a least bound: the arithmetic of mayCross. */
const mayReach = (packets: number, bytes: number, flows: number, seconds: number, least: LeastBounds) =>
  packets / seconds >= least.pps || (bytes * 8) / seconds >= least.bps || flows / seconds >= least.fps;

/** An open window to look at: its end and its kept buckets. */
interface OpenWindow {
  end: number;
  buckets: Array<Readonly<Bucket>>;
}

export class EarlyCrossings {
  /** Destinations reported, by window end: each (target, window end) once. */
  private readonly reported = new Map<number, Set<string>>();
  private found: EarlyCrossing[] = [];
  /** Over every host's thresholds (the workspace's and each host group's): a window whose buckets' peaks reach none holds no crossing. */
  private readonly least: LeastBounds;
  private readonly leastOf = new Map<RateThresholds, LeastBounds>();
  private readonly sums = new Float64Array(counterSlots);

  constructor(
    private readonly book: RateRuleBook,
    private readonly windows: RateWindows,
    private readonly version: number,
  ) {
    this.least = leastBounds([book.rules.thresholds, ...book.rules.host_groups.map((g) => g.thresholds)]);
  }

  private get seconds(): number {
    const { windowBuckets, bucketMs } = this.windows.settings;
    return (windowBuckets * bucketMs) / 1000;
  }

  /**
   * After the flows of one add() were counted and the watermark's windows
   * closed: every destination they touched, in each window still open over
   * the buckets they were counted in whose buckets' peaks may reach a bound,
   * is reported if its running sums reach one of its thresholds' bounds.
   */
  check(flows: readonly RateFlow[]): void {
    this.forgetClosed();
    const open = this.openWindows();
    if (!open.length) return;
    const windowMs = this.windows.settings.windowBuckets * this.windows.settings.bucketMs;
    const from = open[0]!.end - windowMs;
    const to = open[open.length - 1]!.end;
    const seen = new Set<string>();
    for (const f of flows) {
      if (f.ts < from || f.ts >= to || seen.has(f.dst_ip)) continue;
      seen.add(f.dst_ip);
      this.checkDestination(f.dst_ip, open);
    }
  }

  /** The early crossings reported since the last call. */
  take(): EarlyCrossing[] {
    const out = this.found;
    this.found = [];
    return out;
  }

  /** The windows still open over the buckets the last add() touched, oldest first, whose buckets' peaks may reach a bound. */
  private openWindows(): OpenWindow[] {
    const touched = this.windows.touched;
    if (!touched) return [];
    const { bucketMs, windowBuckets } = this.windows.settings;
    const ends = new Set<number>();
    for (const start of this.windows.bucketStarts()) {
      if (start < touched.from || start > touched.to) continue;
      for (let i = 1; i <= windowBuckets; i++) if (start + i * bucketMs > this.windows.closedTo) ends.add(start + i * bucketMs);
    }
    const out: OpenWindow[] = [];
    for (const end of [...ends].sort((a, b) => a - b)) {
      const buckets: Array<Readonly<Bucket>> = [];
      let packets = 0;
      let bytes = 0;
      let flows = 0;
      for (let start = end - windowBuckets * bucketMs; start < end; start += bucketMs) {
        const bucket = this.windows.bucketAt(start);
        if (!bucket) continue;
        buckets.push(bucket);
        packets += bucket.peak.packets;
        bytes += bucket.peak.bytes;
        flows += bucket.peak.flows;
      }
      if (mayReach(packets, bytes, flows, this.seconds, this.least)) out.push({ end, buckets });
    }
    return out;
  }

  /** One destination in each open window: its totals against its thresholds' least bounds first, then its sums against its thresholds. */
  private checkDestination(dst: string, open: readonly OpenWindow[]): void {
    const profile = this.book.profileOf(dst);
    if (profile.whitelisted) return;
    const { thresholds, group } = profile.judged;
    const least = this.leastFor(thresholds);
    const seconds = this.seconds;
    for (const w of open) {
      if (this.reported.get(w.end)?.has(dst)) continue;
      const entries: DestinationEntry[] = [];
      let packets = 0;
      let bytes = 0;
      let flows = 0;
      for (const bucket of w.buckets) {
        const entry = bucket.byDestination.get(dst);
        if (entry === undefined) continue;
        entries.push(entry);
        const counted = entry instanceof Float64Array;
        packets += counted ? entry[0]! : entry.packets;
        bytes += counted ? entry[1]! : entry.bytes;
        flows += counted ? entry[2]! : 1;
      }
      if (!entries.length || !mayReach(packets, bytes, flows, seconds, least)) continue;
      const sums = this.sums.fill(0);
      for (const entry of entries) {
        if (entry instanceof Float64Array) for (let k = 0; k < counterSlots; k++) sums[k] = sums[k]! + entry[k]!;
        else addFlow(sums, entry);
      }
      if (mayCross(sums, seconds, thresholds)) this.report(dst, group, w.end);
    }
  }

  private report(dst: string, group: string, end: number): void {
    let reported = this.reported.get(end);
    if (!reported) this.reported.set(end, (reported = new Set()));
    reported.add(dst);
    this.found.push({ detector_version: this.version, scope: 'host', target: dst, host_group: group, window_end: end, rule: rateRule(this.version, 'host', '', []) });
  }

  private leastFor(thresholds: RateThresholds): LeastBounds {
    let least = this.leastOf.get(thresholds);
    if (!least) this.leastOf.set(thresholds, (least = leastBounds([thresholds])));
    return least;
  }

  /** Windows closed since are judged as closed windows: what was reported of them is no longer needed. */
  private forgetClosed(): void {
    for (const end of this.reported.keys()) if (end <= this.windows.closedTo) this.reported.delete(end);
  }
}
