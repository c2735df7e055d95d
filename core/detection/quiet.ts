import type { ClosedWindow } from './rate-window';
import { crossedBounds, type RateRuleBook } from './rules';
import { ratesOf } from './traffic-class';

/**
 * When an attack ends: a target (a destination, or a carpet's prefix) that
 * crossed is reported quiet once every window ending within `quiet_seconds`
 * of event time after its last crossing window has closed below every bound.
 * Windows close by the watermark (rate-window.ts), so the report depends on
 * the flows alone, not on their order or batching (within the lateness), and
 * a replay of the same flows reports the same quiet targets at the same
 * event times. A window without traffic for the target is below every bound.
 *
 * A carpet's prefix stays above while its summed rates reach a carpet bound,
 * even in a window where it makes no decision (one of its destinations
 * crossed on its own, or fewer than `min_addresses` had traffic): the attack
 * on it is not over.
 */
export interface CrossedTarget {
  scope: 'host' | 'prefix';
  target: string;
  /** The host group whose thresholds judged its last crossing ('' for the workspace's). */
  host_group: string;
  /** Event time the last window it crossed in ends at. */
  last_crossed_end: number;
}

export interface RateQuiet extends CrossedTarget {
  detector_version: number;
  quiet_seconds: number;
  /** Event time it became quiet: its last crossing's window end plus the quiet time. */
  quiet_end: number;
}

/** A carpet prefix's sums over one window. */
export interface PrefixSums {
  counters: Float64Array;
}

const keyOf = (scope: string, target: string) => `${scope}\u0000${target}`;
const byQuietOrder = (a: RateQuiet, b: RateQuiet) => a.quiet_end - b.quiet_end || (keyOf(a.scope, a.target) < keyOf(b.scope, b.target) ? -1 : 1);

/** The targets that crossed and are not yet quiet, judged window by window in event-time order. */
export class QuietTracker {
  private readonly crossed = new Map<string, CrossedTarget>();
  private due: RateQuiet[] = [];

  constructor(
    private readonly book: RateRuleBook,
    /** The version of the detector whose windows it judges, recorded in each report. */
    private readonly version: number,
  ) {}

  private get quietMs(): number {
    return this.book.rules.quiet_seconds * 1000;
  }

  get tracked(): readonly CrossedTarget[] {
    return [...this.crossed.values()].map((t) => ({ ...t }));
  }

  /** One closed window's decisions (each a crossing) and its carpet prefixes' sums. */
  observe(w: ClosedWindow, decisions: ReadonlyArray<Omit<CrossedTarget, 'last_crossed_end'>>, prefixes: ReadonlyMap<string, PrefixSums>): void {
    for (const d of decisions) this.crossed.set(keyOf(d.scope, d.target), { scope: d.scope, target: d.target, host_group: d.host_group, last_crossed_end: w.end });
    for (const t of this.crossed.values()) {
      if (t.scope !== 'prefix' || t.last_crossed_end >= w.end) continue;
      const p = prefixes.get(t.target);
      if (p && crossedBounds(ratesOf(p.counters, w.seconds), this.book.carpetThresholds(t.target).thresholds).length) t.last_crossed_end = w.end;
    }
  }

  /** Every window ending at or before `closedTo` is closed: the targets whose quiet time has passed below every bound are due. */
  closeTo(closedTo: number): void {
    const quietMs = this.quietMs;
    for (const [key, t] of this.crossed) {
      if (t.last_crossed_end + quietMs > closedTo) continue;
      this.due.push({ ...t, detector_version: this.version, quiet_seconds: this.book.rules.quiet_seconds, quiet_end: t.last_crossed_end + quietMs });
      this.crossed.delete(key);
    }
  }

  /** A target that crossed before this tracker began; the later of two crossings of one target counts. */
  remember(t: CrossedTarget): void {
    const key = keyOf(t.scope, t.target);
    const known = this.crossed.get(key);
    if (!known || known.last_crossed_end < t.last_crossed_end) this.crossed.set(key, { ...t });
  }

  /** The quiet targets reported since the last call, by quiet time then target. */
  take(): RateQuiet[] {
    const out = this.due.sort(byQuietOrder);
    this.due = [];
    return out;
  }
}
