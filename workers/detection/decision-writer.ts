import type { Logger } from '../../observability/logger';
import type { DetectionMetrics } from './detection-metrics';
import type { AckableMessage, FeedDecision, FeedEarly, FeedQuiet, FeedStep } from './rate-feed';

export interface DecisionWriterDeps<M extends AckableMessage> {
  /** Stores decisions and early crossings (their attack windows, signals, incidents), in one go. */
  write(decisions: FeedDecision[], early: FeedEarly[]): Promise<void>;
  /** Resolves a quiet target's incident. */
  resolve(quiet: FeedQuiet): Promise<void>;
  /** Forgets the counted state and answers every held message (a write failed: they are offered again). */
  reset(): M[];
  metrics: DetectionMetrics;
  log: Logger;
}

/**
 * The detection consumer's writes, beside its counting: the steps the feed
 * decided queue here, and are written in order while the next messages are
 * counted. The steps that queued behind a write are written together (one
 * insert of their attack windows, one of their signals, one correlation).
 *
 * The quiet targets a step found are resolved beside the writes, one at a
 * time in the order found, each once the decisions of its step and of the
 * steps before it are written. A decision or early crossing of a target
 * whose resolution is under way or waiting is written after it (the batch
 * is cut before its step): what a target crossed before its quiet joins the
 * incident that resolves, and what it crosses after opens another. Other
 * targets' decisions do not wait for a resolution (each one is some ten
 * ClickHouse statements and an audit entry: bench scenario 14, 2026-12-01,
 * resolving one a second held every flood's writes behind them, and the
 * floods were judged up to 6 s after their first flows instead of 1).
 *
 * A step's messages are acknowledged only after its writes and its
 * resolutions. A failed write or resolution offers again the messages of its
 * steps, of every step queued or resolving behind it, and every held
 * message, and the feed starts afresh (the redelivered messages rebuild it).
 *
 * Counting and writing one message at a time, the consumer fell behind a
 * flood under load, each message waiting for the ClickHouse statements of
 * the one before (bench scenario 14, 2026-11-30: windows judged 29 s after
 * their closing flows at the p50, the backlog growing to 1,600 messages).
 */
export class DecisionWriter<M extends AckableMessage> {
  private queue: Array<FeedStep<M>> = [];
  private running?: Promise<void>;
  /** The resolutions, one after the other: the last one queued. */
  private resolving: Promise<void> = Promise.resolve();
  /** The steps whose resolutions are under way or waiting, with their targets. */
  private readonly unresolved = new Set<{ step: FeedStep<M>; targets: Set<string>; done: Promise<void> }>();
  /** Grows with each failure: a resolution queued before one offers its step again instead of resolving. */
  private failures = 0;

  constructor(
    private readonly config: { maxQueuedSteps: number },
    private readonly deps: DecisionWriterDeps<M>,
  ) {}

  /** Queues a step; resolves at once, or, when `maxQueuedSteps` wait behind the write under way, once they are written. */
  async add(step: FeedStep<M>): Promise<void> {
    if (!step.decisions.length && !step.early.length && !step.quiet.length && !step.ackable.length) return;
    this.queue.push(step);
    this.running ??= this.run();
    if (this.queue.length >= this.config.maxQueuedSteps) await this.running;
  }

  /** Resolves once every queued step is written and every quiet target resolved (or offered again). */
  async idle(): Promise<void> {
    while (this.running || this.unresolved.size) await Promise.all([this.running, this.resolving]);
  }

  private async run(): Promise<void> {
    while (this.queue.length) await this.writeTogether(this.nextBatch());
    this.running = undefined;
  }

  /** The queued steps up to the first (but the first) that touches a target resolving, or quiet in a step before it. */
  private nextBatch(): Array<FeedStep<M>> {
    const quiet = new Set<string>();
    for (const u of this.unresolved) for (const t of u.targets) quiet.add(t);
    const end = this.queue.findIndex((s, i) => {
      if (i > 0 && touchedTargets(s).some((t) => quiet.has(t))) return true;
      for (const q of s.quiet) quiet.add(targetOf(q.org, q.quiet.target));
      return false;
    });
    return this.queue.splice(0, end === -1 ? this.queue.length : end);
  }

  private async writeTogether(batch: Array<FeedStep<M>>): Promise<void> {
    const decisions = batch.flatMap((s) => s.decisions);
    const early = batch.flatMap((s) => s.early);
    const failures = this.failures;
    try {
      // Its first step may touch a target still resolving: written after it.
      const touched = new Set(touchedTargets(batch[0]!));
      await Promise.all([...this.unresolved].filter((u) => [...u.targets].some((t) => touched.has(t))).map((u) => u.done));
      if (failures !== this.failures) return this.offerAgain(batch);
      if (decisions.length || early.length) await this.deps.write(decisions, early);
    } catch (err) {
      return this.fail(err, batch, 'unable to write rate decisions; the held messages are offered again');
    }
    for (const s of batch) {
      if (s.quiet.length) this.resolveLater(s);
      else for (const m of s.ackable) m.ack();
    }
  }

  /** Queues the step's resolutions behind those before it; its messages are acknowledged after them. */
  private resolveLater(step: FeedStep<M>): void {
    const failures = this.failures;
    const done = this.resolving.then(async () => {
      if (failures !== this.failures) return this.offerAgain([step]);
      try {
        for (const quiet of step.quiet) await this.deps.resolve(quiet);
        for (const m of step.ackable) m.ack();
      } catch (err) {
        this.fail(err, [step], 'unable to resolve a quiet target; the held messages are offered again');
      }
    });
    const entry = { step, targets: new Set(step.quiet.map((q) => targetOf(q.org, q.quiet.target))), done };
    this.unresolved.add(entry);
    this.resolving = done.finally(() => this.unresolved.delete(entry));
  }

  /** Offers again the messages of these steps, of every step queued behind them, and every held message; the feed starts afresh. */
  private fail(err: unknown, steps: Array<FeedStep<M>>, message: string): void {
    this.failures += 1;
    this.deps.metrics.errors.inc({ stage: 'write' });
    const queued = this.queue.splice(0);
    this.deps.log.error({ err, decisions: steps.reduce((n, s) => n + s.decisions.length, 0), steps: steps.length + queued.length }, message);
    this.offerAgain([...steps, ...queued]);
    for (const m of this.deps.reset()) m.nak(1_000);
  }

  private offerAgain(steps: Array<FeedStep<M>>): void {
    for (const m of steps.flatMap((s) => s.ackable)) m.nak(1_000);
  }
}

const targetOf = (org: string, target: string) => `${org}\u0000${target}`;

/** The targets a step's decisions and early crossings are of. */
function touchedTargets<M>(step: FeedStep<M>): string[] {
  return [...step.decisions.map((d) => targetOf(d.org, d.decision.target)), ...step.early.map((e) => targetOf(e.org, e.crossing.target))];
}
