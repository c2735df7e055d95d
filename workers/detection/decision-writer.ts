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
 * insert of their attack windows, one of their signals, one correlation),
 * up to and including the first that resolves quiet targets, whose
 * resolutions follow its decisions and precede any decided after it. A
 * step's messages are acknowledged only after its writes. A failed write
 * offers again the messages of its steps, of every step queued behind it,
 * and every held message, and the feed starts afresh (the redelivered
 * messages rebuild it).
 *
 * Counting and writing one message at a time, the consumer fell behind a
 * flood under load, each message waiting for the ClickHouse statements of
 * the one before (bench scenario 14, 2026-11-30: windows judged 29 s after
 * their closing flows at the p50, the backlog growing to 1,600 messages).
 */
export class DecisionWriter<M extends AckableMessage> {
  private queue: Array<FeedStep<M>> = [];
  private running?: Promise<void>;

  constructor(
    private readonly config: { maxQueuedSteps: number },
    private readonly deps: DecisionWriterDeps<M>,
  ) {}

  /** Queues a step; resolves at once, or, when `maxQueuedSteps` wait behind the write under way, once they are written. */
  async add(step: FeedStep<M>): Promise<void> {
    if (!step.decisions.length && !step.early.length && !step.quiet.length && !step.ackable.length) return;
    this.queue.push(step);
    this.running ??= this.run();
    if (this.queue.length >= this.config.maxQueuedSteps) await this.idle();
  }

  /** Resolves once every queued step is written (or offered again). */
  idle(): Promise<void> {
    return this.running ?? Promise.resolve();
  }

  private async run(): Promise<void> {
    while (this.queue.length) await this.writeTogether(this.nextBatch());
    this.running = undefined;
  }

  /** The queued steps up to and including the first with quiet targets. */
  private nextBatch(): Array<FeedStep<M>> {
    const end = this.queue.findIndex((s) => s.quiet.length > 0);
    return this.queue.splice(0, end === -1 ? this.queue.length : end + 1);
  }

  private async writeTogether(batch: Array<FeedStep<M>>): Promise<void> {
    const decisions = batch.flatMap((s) => s.decisions);
    const early = batch.flatMap((s) => s.early);
    try {
      if (decisions.length || early.length) await this.deps.write(decisions, early);
      for (const quiet of batch.at(-1)!.quiet) await this.deps.resolve(quiet);
      for (const s of batch) for (const m of s.ackable) m.ack();
    } catch (err) {
      this.deps.metrics.errors.inc({ stage: 'write' });
      this.deps.log.error(
        { err, decisions: decisions.length, steps: batch.length + this.queue.length },
        'unable to write rate decisions or resolve quiet targets; the held messages are offered again',
      );
      const queued = this.queue.splice(0);
      for (const m of [...batch, ...queued].flatMap((s) => s.ackable)) m.nak(1_000);
      for (const m of this.deps.reset()) m.nak(1_000);
    }
  }
}
