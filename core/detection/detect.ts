import { classify, type AttackType } from './classify';
import { defaultWindowSettings, RateWindows, type ClosedWindow, type WindowSettings } from './rate-window';
import { crossedBounds, mayCross, RateRuleBook, type RateRules } from './rules';
import { addressesIn } from './prefix-sums';
import { ratesOf, type RateFlow, type Rates } from './traffic-class';
import { QuietTracker, type CrossedTarget, type PrefixSums, type RateQuiet } from './quiet';
import { EarlyCrossings, type EarlyCrossing } from './early-crossings';
import { rateDetectorVersion, rateRule } from './version';

/**
 * What the rate detectors decide for one closed window: each destination
 * whose rates reach a bound of its thresholds (its host group's or the
 * workspace's; a whitelisted destination never), then each carpet prefix
 * none of whose destinations crossed, whose summed rates reach the carpet
 * thresholds over at least `min_addresses` destinations. Decisions come out
 * ordered by window end, then host before prefix, then target, so the same
 * windows give the same list.
 */
export interface RateDecision {
  detector_version: number;
  scope: 'host' | 'prefix';
  /** The destination address, or the prefix (CIDR) of a carpet crossing. */
  target: string;
  /** The host group whose thresholds judged it; '' for the workspace's. */
  host_group: string;
  /** Event time the window ends at (exclusive). */
  window_end: number;
  rates: Rates;
  /** The bounds reached, `class.measure>=bound`. */
  crossed: string[];
  type: AttackType;
  /** The shape's own type (equal to `type` but for carpet). */
  vector: AttackType;
  /** Destinations with traffic in the window: 1 for a host. */
  addresses: number;
  /** The window's buckets dropped destinations past the memory bound. */
  saturated: boolean;
  rule: string;
}

function decision(version: number, scope: 'host' | 'prefix', target: string, group: string, w: ClosedWindow, rates: Rates, crossed: string[], addresses: number): RateDecision {
  const { type, vector } = classify(rates, scope);
  return {
    detector_version: version,
    scope,
    target,
    host_group: group,
    window_end: w.end,
    rates,
    crossed,
    type,
    vector,
    addresses,
    saturated: w.saturated,
    rule: rateRule(version, scope, type, crossed),
  };
}

const byText = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** The decisions of one closed window under the rules, by a detector version. */
export function judgeWindow(w: ClosedWindow, book: RateRuleBook, version = rateDetectorVersion): RateDecision[] {
  return judged(w, book, version).decisions;
}

/**
 * One window's decisions, and the summed counters of every carpet prefix with
 * traffic in it (whether it crossed or not). The window holds every
 * destination that may cross (rate-window.ts), visited in its order and the
 * decisions sorted after; a destination below every bound of its thresholds
 * (rules.ts mayCross) is not judged further. A carpet prefix is judged on
 * its sums, and its destinations are counted only once they reach a bound.
 */
export function judged(w: ClosedWindow, book: RateRuleBook, version = rateDetectorVersion): { decisions: RateDecision[]; prefixes: ReadonlyMap<string, PrefixSums> } {
  const hosts: RateDecision[] = [];
  const crossedPrefixes = new Set<string>();
  for (const [dst, counters] of w.byDestination) {
    const profile = book.profileOf(dst);
    if (profile.whitelisted || !mayCross(counters, w.seconds, profile.judged.thresholds)) continue;
    const rates = ratesOf(counters, w.seconds);
    const bounds = crossedBounds(rates, profile.judged.thresholds);
    if (!bounds.length) continue;
    hosts.push(decision(version, 'host', dst, profile.judged.group, w, rates, bounds, 1));
    if (profile.carpetPrefix) crossedPrefixes.add(profile.carpetPrefix);
  }
  hosts.sort((a, b) => byText(a.target, b.target));
  const carpets: RateDecision[] = [];
  for (const [prefix, p] of w.prefixes) {
    const carpet = book.carpetThresholds(prefix);
    if (crossedPrefixes.has(prefix) || !mayCross(p.counters, w.seconds, carpet.thresholds)) continue;
    const addresses = addressesIn(p);
    if (addresses < book.rules.carpet.min_addresses) continue;
    const rates = ratesOf(p.counters, w.seconds);
    carpets.push(decision(version, 'prefix', prefix, carpet.group, w, rates, crossedBounds(rates, carpet.thresholds), addresses));
  }
  carpets.sort((a, b) => byText(a.target, b.target));
  return { decisions: [...hosts, ...carpets], prefixes: w.prefixes };
}

/** Which detector version a RateDetector runs, and whether it reports early crossings (version 2 on, unless told not to: a replay reads closed windows only). */
export interface DetectorOptions {
  version?: number;
  early?: boolean;
}

/**
 * The streaming detector of one workspace: flows in (any batches), the
 * decisions of the windows they close out, and from version 2 on the host
 * windows that will cross, as soon as the flows that make them cross are
 * counted (takeEarly). The stream workers keep one per workspace and rules
 * version; a replay runs detectRates on the stored flows.
 */
export class RateDetector {
  readonly book: RateRuleBook;
  readonly version: number;
  private readonly windows: RateWindows;
  private readonly quiet: QuietTracker;
  private readonly early: EarlyCrossings | undefined;

  constructor(rules: RateRules, settings: WindowSettings = defaultWindowSettings, options: DetectorOptions = {}) {
    this.version = options.version ?? rateDetectorVersion;
    this.book = new RateRuleBook(rules);
    this.windows = new RateWindows(settings, {
      skip: (f) => this.book.isWhitelistedSource(f.src_ip),
      mayMatter: (total, seconds) => this.book.mayAnyCross(total, seconds),
      mayReachHost: (packets, bytes, flows, seconds) => this.book.mayReachHost(packets, bytes, flows, seconds),
      prefixOf: (dst) => this.book.prefixOf(dst),
    });
    this.quiet = new QuietTracker(this.book, this.version);
    this.early = (options.early ?? this.version >= 2) ? new EarlyCrossings(this.book, this.windows, this.version) : undefined;
  }

  /** Counts the flows and returns the decisions of the windows the watermark has now closed. */
  add(flows: Iterable<RateFlow>): RateDecision[] {
    const counted = Array.isArray(flows) ? (flows as readonly RateFlow[]) : [...flows];
    this.windows.add(counted);
    const decisions = this.judge(this.windows.advance());
    this.early?.check(counted);
    return decisions;
  }

  /** The host windows still open that reached a bound since the last call (version 2 on): each (target, window end) once, before its decision. */
  takeEarly(): EarlyCrossing[] {
    return this.early?.take() ?? [];
  }

  /** Closes every window: the decisions still pending at the end of the flows. */
  flush(): RateDecision[] {
    return this.judge(this.windows.flush());
  }

  private judge(windows: ClosedWindow[]): RateDecision[] {
    const out: RateDecision[] = [];
    for (const w of windows) {
      const { decisions, prefixes } = judged(w, this.book, this.version);
      this.quiet.observe(w, decisions, prefixes);
      out.push(...decisions);
    }
    this.quiet.closeTo(this.windows.closedTo);
    return out;
  }

  /** The targets reported quiet since the last call (each once per crossing), in the order they became quiet. */
  takeQuiet(): RateQuiet[] {
    return this.quiet.take();
  }

  /** The targets that crossed and are not yet quiet, to carry to a successor (a new rules version, a restart). */
  get crossing(): readonly CrossedTarget[] {
    return this.quiet.tracked;
  }

  /** Takes a target that crossed before this detector began (see `crossing`): its quiet is judged from its last crossing on. */
  remember(target: CrossedTarget): void {
    this.quiet.remember(target);
  }

  /** Flows left out for arriving after their bucket closed, and flows past the destination bound. */
  get dropped(): { late: number; untracked: number } {
    return { late: this.windows.late, untracked: this.windows.untracked };
  }
}

/** A version on a whole set of flows, as a replay runs it: every window closed at the end, the closed windows' decisions (the early crossings are among them). */
const closedWindowsOf =
  (version: number) =>
  (flows: readonly RateFlow[], rules: RateRules, settings: WindowSettings = defaultWindowSettings): RateDecision[] => {
    const sorted = [...flows].sort((a, b) => a.ts - b.ts);
    const detector = new RateDetector(rules, settings, { version, early: false });
    return [...detector.add(sorted), ...detector.flush()];
  };

type Detect = ReturnType<typeof closedWindowsOf>;

/** Every detector version still runnable, by version: a replay runs the one its incident's rule names (core/detection/version.ts). */
export const rateDetectors: Readonly<Record<number, Detect>> = { 1: closedWindowsOf(1), 2: closedWindowsOf(2) };

/** The decisions of a version on a set of flows, or undefined when that version is no longer runnable. */
export function detectRates(version: number, flows: readonly RateFlow[], rules: RateRules, settings?: WindowSettings): RateDecision[] | undefined {
  const run = Object.hasOwn(rateDetectors, version) ? rateDetectors[version] : undefined;
  return run?.(flows, rules, settings);
}
