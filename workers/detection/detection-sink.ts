import type { DetectionRulesSource } from '../../application/detection-rules-service';
import type { WorkspaceDirectory } from '../../application/known-workspaces';
import type { QuietOutcome } from '../../application/quiet-resolutions';
import type { CrossedTarget, RateQuiet } from '../../core/detection/quiet';
import { correlateSignals, storeDerivedSignals, type DerivedSignalWrites } from '../../application/derived-signals';
import { inForce } from '../../core/detection-rules';
import type { WindowSettings } from '../../core/detection/rate-window';
import { rateSignal } from '../../core/detection/signals';
import type { Logger } from '../../observability/logger';
import type { AttackWindow } from '../../storage/attack-windows-repo';
import type { DetectionMetrics } from './detection-metrics';
import { screenFeedMessage, type FeedRefusal, type FeedScreenConfig } from './feed-screen';
import { DecisionWriter } from './decision-writer';
import { RateFeed, type AckableMessage, type FeedDecision, type FeedEarly, type FeedStep } from './rate-feed';
import { dropOldest } from '../../core/bounded-map';

/** A message of the detection feed: the part of a JetStream message the sink uses. */
export interface DetectionMessage extends AckableMessage {
  readonly subject: string;
  readonly data: Uint8Array;
  readonly headers?: { get(key: string): string };
  /** Never offered again: a refused message. */
  term(): void;
}

export interface DetectionSinkDeps {
  rules: DetectionRulesSource;
  workspaces: WorkspaceDirectory;
  /** Incidents of targets quiet for their quiet time resolve (application/quiet-resolutions.ts). */
  resolutions: {
    resolve(orgId: string, quiet: RateQuiet): Promise<QuietOutcome>;
    crossings(orgId: string): Promise<readonly CrossedTarget[]>;
  };
  signals: DerivedSignalWrites;
  attacks: { insert(rows: readonly AttackWindow[]): Promise<void> };
  correlator: { recompute(orgId: string, changes: Array<{ service: string; environment: string; region: string; since: number }>): Promise<unknown> };
  metrics: DetectionMetrics;
  log: Logger;
  now?: () => number;
}

/**
 * Takes the detection feed's messages one at a time (the feed's state is one
 * sequence): parses each one's flows and counts them under its workspace's
 * rules in force. What a message decided goes to the decision writer
 * (decision-writer.ts), which writes it beside the counting of the next
 * messages, in order: the decisions of the windows that closed (their attack
 * windows, then their signals, then the incidents of their keys, as the
 * stream workers do for derived signals) and the signals of the windows
 * reported early (the same signals as their decisions at the close, stored
 * once), and only then acknowledges the messages whose windows are all
 * closed (rate-feed.ts). A failed write offers every held message again and
 * starts the state afresh: the redelivered messages rebuild it.
 */
export class DetectionSink<M extends DetectionMessage> {
  private readonly feed: RateFeed<M>;
  private readonly writer: DecisionWriter<M>;
  private chain: Promise<void> = Promise.resolve();
  /** When each workspace's last message was taken, by wall time: its idle flush waits for the lateness after it. */
  private readonly lastTaken = new Map<string, number>();
  /**
   * Ids of the signals this holder stored (or found stored) and correlated
   * itself, the latest `settledSignalsKept`: a window reported early is
   * decided again when it closes, under the same id, and its signal needs
   * neither the lookup nor a second correlation, which found nothing new
   * and cost the one ClickHouse session a lookup and a recompute a window.
   */
  private readonly settled = new Set<string>();

  constructor(
    /** `maxQueuedSteps`: steps waiting for their writes at most, before counting waits for them (256). */
    private readonly config: { idleFlushMs: number; screen: FeedScreenConfig; settings?: WindowSettings; maxQueuedSteps?: number },
    private readonly deps: DetectionSinkDeps,
  ) {
    this.feed = new RateFeed<M>(config.settings);
    this.writer = new DecisionWriter<M>(
      { maxQueuedSteps: config.maxQueuedSteps ?? 256 },
      {
        write: (decisions, early) => this.write(decisions, early),
        resolve: async ({ org, quiet }) => void this.deps.metrics.quiet.inc({ outcome: await this.deps.resolutions.resolve(org, quiet) }),
        reset: () => this.feed.reset(),
        metrics: deps.metrics,
        log: deps.log,
      },
    );
  }

  private now(): number {
    return (this.deps.now ?? Date.now)();
  }

  /** Handles a message after those before it; resolves once it is counted (what it decided is written after: flush). */
  add(message: M): Promise<void> {
    return this.enqueue(() => this.handle(message));
  }

  /** Waits for every message in hand to be counted and what they decided to be written (their acks may wait for later windows). */
  async flush(): Promise<void> {
    await this.chain;
    await this.writer.idle();
  }

  /**
   * Called on a timer: the open windows of each workspace none of whose
   * messages came for `idleFlushMs` (the lateness) of wall time are closed
   * and judged, so a flood that stops is still judged while other
   * workspaces' flows go on, and their held messages are acknowledged. A
   * refused message is no workspace's: it holds no flush back.
   */
  tick(): Promise<void> {
    if (this.feed.heldMessages === 0 || !this.idleWorkspaces().size) return this.chain;
    return this.enqueue(async () => {
      const idle = this.idleWorkspaces();
      for (const org of idle) this.lastTaken.delete(org);
      if (idle.size) await this.apply(this.feed.flush(idle));
    });
  }

  private idleWorkspaces(): Set<string> {
    const now = this.now();
    return new Set([...this.lastTaken].filter(([, at]) => now - at >= this.config.idleFlushMs).map(([org]) => org));
  }

  keepAlive(): void {
    this.feed.keepAlive();
  }

  /** Offers every held message again at once (this process stops leading), once the writes under way are done: the next holder rebuilds the state from them. */
  release(): Promise<void> {
    return this.enqueue(async () => {
      await this.writer.idle();
      for (const m of this.feed.reset()) m.nak();
      this.deps.metrics.held.set(0);
    });
  }

  private enqueue(work: () => Promise<void>): Promise<void> {
    const next = this.chain.then(work).catch((err: unknown) => {
      this.deps.metrics.errors.inc({ stage: 'handle' });
      this.deps.log.error({ err }, 'unable to handle a detection feed message; the held messages are offered again');
      for (const m of this.feed.reset()) m.nak(1_000);
    });
    this.chain = next;
    return next;
  }

  private async handle(message: M): Promise<void> {
    const screened = screenFeedMessage(message, this.config.screen, this.now());
    if (!screened.ok) return this.refuse(message, screened.reason);
    const { org, flows } = screened;
    let history;
    let crossing: readonly CrossedTarget[] = [];
    try {
      if (!(await this.deps.workspaces.exists(org))) return this.refuse(message, 'unknown_workspace');
      history = await this.deps.rules.history(org);
      if (!this.feed.has(org)) crossing = await this.deps.resolutions.crossings(org);
    } catch (err) {
      this.deps.metrics.errors.inc({ stage: 'rules' });
      this.deps.log.error({ err, org }, 'unable to read the workspace or its detection rules; the message is offered again');
      message.nak(1_000);
      return;
    }
    const rules = inForce(history);
    this.lastTaken.set(org, this.now());
    const step = this.feed.take(org, { version: rules.version, rates: rules.rules.rates }, message, flows, crossing);
    this.deps.metrics.flows.inc({ outcome: 'counted' }, Math.max(0, flows.length - step.late - step.untracked));
    await this.apply(step);
  }

  /** A message that is no copy of written flows: counted by reason and terminated (never offered again), none of it counted. */
  private refuse(message: M, reason: FeedRefusal): void {
    this.deps.metrics.refused.inc({ reason });
    this.deps.log.warn({ subject: message.subject.slice(0, 200), reason, bytes: message.data.byteLength }, 'refused a message of the detection feed');
    message.term();
  }

  /** Counts a step's dropped flows and hands it to the writer (its decisions written, then its messages acknowledged). */
  private async apply(step: FeedStep<M>): Promise<void> {
    if (step.late) this.deps.metrics.flows.inc({ outcome: 'late' }, step.late);
    if (step.untracked) this.deps.metrics.flows.inc({ outcome: 'untracked' }, step.untracked);
    this.deps.metrics.held.set(this.feed.heldMessages);
    await this.writer.add(step);
  }

  private async write(decisions: FeedDecision[], early: FeedEarly[]): Promise<void> {
    const now = this.now();
    const signals = decisions.map((d) => rateSignal(d.org, d.decision, now));
    if (decisions.length) await this.deps.attacks.insert(decisions.map((d, i) => attackWindowOf(d, signals[i]!.event_id, now)));
    // An early crossing's signal is its window's decision's (same id): stored once, whichever comes first.
    const unsettled = [...early.map((e) => rateSignal(e.org, e.crossing, now)), ...signals].filter((s) => !this.settled.has(s.event_id));
    // Correlated whether stored now or before, unless this holder did both: the holder that stored them may have stopped before correlating.
    const toCorrelate = await storeDerivedSignals(this.deps.signals, unsettled, true);
    await correlateSignals(this.deps.correlator, toCorrelate);
    for (const s of unsettled) this.settle(s.event_id);
    for (const d of decisions) this.deps.metrics.decisions.inc({ type: d.decision.type });
    if (early.length) this.deps.metrics.early.inc(early.length);
  }

  /** Remembers a signal stored and correlated by this holder, forgetting the oldest past the bound. */
  private settle(eventId: string): void {
    this.settled.add(eventId);
    dropOldest(this.settled, settledSignalsKept);
  }
}

/** Signals remembered as stored and correlated here: far more than the windows a flood's decisions span. */
const settledSignalsKept = 10_000;

function attackWindowOf(d: FeedDecision, eventId: string, now: number): AttackWindow {
  const { decision } = d;
  return {
    org_id: d.org,
    event_id: eventId,
    scope: decision.scope,
    target: decision.target,
    host_group: decision.host_group,
    window_end: decision.window_end,
    type: decision.type,
    vector: decision.vector,
    detector_version: decision.detector_version,
    rules_version: d.rules_version,
    rates: decision.rates,
    details: d.details,
    created_at: now,
  };
}
