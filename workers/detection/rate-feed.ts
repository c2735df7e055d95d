import { attackDetails, type AttackDetails } from '../../core/detection/attack-details';
import { RateDetector, type RateDecision } from '../../core/detection/detect';
import type { EarlyCrossing } from '../../core/detection/early-crossings';
import { defaultWindowSettings, type WindowSettings } from '../../core/detection/rate-window';
import type { CrossedTarget, RateQuiet } from '../../core/detection/quiet';
import type { RateRules } from '../../core/detection/rules';
import type { RateFlow } from '../../core/detection/traffic-class';

/**
 * The detection consumer's state, without I/O: one RateDetector per
 * workspace and rules version, fed each message's flows, and the messages
 * held until they may be acknowledged.
 *
 * The ack rule: a message is acknowledged only once the watermark has
 * closed every window its flows count in (its newest flow's bucket plus the
 * window's buckets), and after the decisions of those windows were written.
 * Until then its flows may still change a decision, so a crash or a takeover
 * must see it again: the successor's detector is rebuilt from exactly the
 * redelivered messages, with no warm-up read. Held messages are kept alive
 * with working() (keepAlive).
 *
 * The attack's details of a decision come from the held flows of its
 * window and target: every message whose flows count in a window is still
 * held when that window closes.
 */
export interface AckableMessage {
  ack(): void;
  nak(delayMs?: number): void;
  working(): void;
}

/** The rules a workspace's flows are judged by: its detection rules version and their rate rules. */
export interface FeedRules {
  version: number;
  rates: RateRules;
}

export interface FeedDecision {
  org: string;
  rules_version: number;
  decision: RateDecision;
  details: AttackDetails;
}

/** A host window of a workspace that will cross, reported before it closes (detector version 2): its signal, without the attack's details yet. */
export interface FeedEarly {
  org: string;
  rules_version: number;
  crossing: EarlyCrossing;
}

/** A target of a workspace that has been quiet for its rules' quiet time: its incident resolves. */
export interface FeedQuiet {
  org: string;
  quiet: RateQuiet;
}

/** What a step decided: decisions and early crossings to write first, the quiet targets to resolve, then the messages to acknowledge, and the flows left out. */
export interface FeedStep<M> {
  decisions: FeedDecision[];
  early: FeedEarly[];
  quiet: FeedQuiet[];
  ackable: M[];
  late: number;
  untracked: number;
}

interface Held<M> {
  message: M;
  flows: RateFlow[];
  /** The watermark that closes the last window the message's flows count in. */
  closedBy: number;
}

class Workspace<M> {
  readonly detector: RateDetector;
  held: Array<Held<M>> = [];
  newest = Number.NEGATIVE_INFINITY;
  /** After a flush, every window up to here is closed. */
  flushedTo = Number.NEGATIVE_INFINITY;
  counted = { late: 0, untracked: 0 };

  constructor(
    readonly org: string,
    readonly rules: FeedRules,
    readonly settings: WindowSettings,
  ) {
    this.detector = new RateDetector(rules.rates, settings);
  }

  get watermark(): number {
    return Math.max(this.newest - this.settings.latenessMs, this.flushedTo);
  }
}

const bucketStart = (ts: number, bucketMs: number) => ts - (((ts % bucketMs) + bucketMs) % bucketMs);

export class RateFeed<M extends AckableMessage> {
  private readonly workspaces = new Map<string, Workspace<M>>();

  constructor(private readonly settings: WindowSettings = defaultWindowSettings) {}

  /** Messages held, for a gauge and tests. */
  get heldMessages(): number {
    let n = 0;
    for (const w of this.workspaces.values()) n += w.held.length;
    return n;
  }

  /** Whether the workspace has a detector here (else its first message's `crossing` seeds one). */
  has(org: string): boolean {
    return this.workspaces.has(org);
  }

  /**
   * Counts one message's flows under its workspace's rules; a new rules
   * version first closes the previous one's windows, and its detector takes
   * the targets still crossing. `crossing`: the targets a new workspace's
   * detector takes as crossing (its rate incidents not yet resolved), so a
   * quiet that began before this process led still resolves them.
   */
  take(org: string, rules: FeedRules, message: M, flows: RateFlow[], crossing: readonly CrossedTarget[] = []): FeedStep<M> {
    const steps: Array<FeedStep<M>> = [];
    let w = this.workspaces.get(org);
    let carried = crossing;
    if (w && w.rules.version !== rules.version) {
      steps.push(this.close(w));
      carried = w.detector.crossing;
      w = undefined;
    }
    if (!w) {
      this.workspaces.set(org, (w = new Workspace<M>(org, rules, this.settings)));
      for (const c of carried) w.detector.remember(c);
    }
    const { bucketMs, windowBuckets } = this.settings;
    let closedBy = Number.NEGATIVE_INFINITY;
    for (const f of flows) {
      if (f.ts > w.newest) w.newest = f.ts;
      closedBy = Math.max(closedBy, bucketStart(f.ts, bucketMs) + windowBuckets * bucketMs);
    }
    w.held.push({ message, flows, closedBy });
    steps.push(this.step(w, w.detector.add(flows)));
    return merged(steps);
  }

  /**
   * Closes every open window of the workspaces named (no flow of theirs came
   * for a while: a flood that stops is still judged), or of all; their held
   * messages become ackable.
   */
  flush(orgs?: ReadonlySet<string>): FeedStep<M> {
    return merged([...this.workspaces.values()].filter((w) => !orgs || orgs.has(w.org)).map((w) => this.close(w, false)));
  }

  /** Keeps every held message from being redelivered while its windows are open. */
  keepAlive(): void {
    for (const w of this.workspaces.values()) for (const h of w.held) h.message.working();
  }

  /** Forgets everything and returns the held messages (a write failed: they are offered again and the state rebuilt from them). */
  reset(): M[] {
    const out = [...this.workspaces.values()].flatMap((w) => w.held.map((h) => h.message));
    this.workspaces.clear();
    return out;
  }

  private close(w: Workspace<M>, forget = true): FeedStep<M> {
    const decisions = w.detector.flush();
    const { bucketMs, windowBuckets } = this.settings;
    w.flushedTo = Math.max(w.flushedTo, w.newest + windowBuckets * bucketMs);
    const step = this.step(w, decisions);
    if (forget) this.workspaces.delete(w.org);
    return step;
  }

  private step(w: Workspace<M>, decisions: RateDecision[]): FeedStep<M> {
    const flowsOf = decisions.length ? this.flowsByTarget(w, decisions) : new Map<string, RateFlow[]>();
    const out = decisions.map((decision) => ({
      org: w.org,
      rules_version: w.rules.version,
      decision,
      details: attackDetails(inWindow(flowsOf.get(decision.target) ?? [], decision.window_end - this.windowMs, decision.window_end), [decision]),
    }));
    const watermark = w.watermark;
    const ackable: M[] = [];
    w.held = w.held.filter((h) => {
      if (h.closedBy > watermark) return true;
      ackable.push(h.message);
      return false;
    });
    const { late, untracked } = w.detector.dropped;
    const quiet = w.detector.takeQuiet().map((q) => ({ org: w.org, quiet: q }));
    const early = w.detector.takeEarly().map((crossing) => ({ org: w.org, rules_version: w.rules.version, crossing }));
    const step = { decisions: out, early, quiet, ackable, late: late - w.counted.late, untracked: untracked - w.counted.untracked };
    w.counted = { late, untracked };
    return step;
  }

  private get windowMs(): number {
    return this.settings.windowBuckets * this.settings.bucketMs;
  }

  /**
   * The held flows of the decisions' targets within their windows, by target
   * (an address, or a carpet's prefix): one pass over the held flows per step,
   * whatever the number of decisions, each destination's prefix found once.
   */
  private flowsByTarget(w: Workspace<M>, decisions: RateDecision[]): Map<string, RateFlow[]> {
    const book = w.detector.book;
    const hosts = new Set(decisions.filter((d) => d.scope === 'host').map((d) => d.target));
    const prefixes = new Set(decisions.filter((d) => d.scope === 'prefix').map((d) => d.target));
    const from = Math.min(...decisions.map((d) => d.window_end)) - this.windowMs;
    const to = Math.max(...decisions.map((d) => d.window_end));
    const prefixOf = new Map<string, string | undefined>();
    const out = new Map<string, RateFlow[]>();
    const put = (target: string, f: RateFlow) => (out.get(target) ?? out.set(target, []).get(target)!).push(f);
    for (const h of w.held) {
      for (const f of h.flows) {
        if (f.ts < from || f.ts >= to || book.isWhitelistedSource(f.src_ip)) continue;
        if (hosts.has(f.dst_ip)) put(f.dst_ip, f);
        if (prefixes.size === 0) continue;
        if (!prefixOf.has(f.dst_ip)) prefixOf.set(f.dst_ip, book.carpetPrefixOf(f.dst_ip));
        const prefix = prefixOf.get(f.dst_ip);
        if (prefix !== undefined && prefixes.has(prefix)) put(prefix, f);
      }
    }
    return out;
  }
}

const inWindow = (flows: RateFlow[], from: number, to: number) => flows.filter((f) => f.ts >= from && f.ts < to);

function merged<M>(steps: Array<FeedStep<M>>): FeedStep<M> {
  return {
    decisions: steps.flatMap((s) => s.decisions),
    early: steps.flatMap((s) => s.early),
    quiet: steps.flatMap((s) => s.quiet),
    ackable: steps.flatMap((s) => s.ackable),
    late: steps.reduce((n, s) => n + s.late, 0),
    untracked: steps.reduce((n, s) => n + s.untracked, 0),
  };
}
