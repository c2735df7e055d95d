import { PeriodicRound } from '../../core/periodic-round';
import type { Logger } from '../../observability/logger';
import { counter, type Registry } from '../../observability/metrics';
import type { RollupFold } from '../../storage/rollup-fold';

/** The lock one process of the stream-workers role holds while it folds (two folds at once would both add the same delta). */
export const rollupFoldLock = 'rollup-fold';

export interface RollupFolderDeps {
  fold: Pick<RollupFold, 'foldOnce'>;
  locks: { tryWithLock<T>(name: string, work: () => Promise<T>): Promise<T | undefined> };
  registry: Registry;
  log: Logger;
}

function rollupFoldMetrics(registry: Registry) {
  return {
    buckets: counter(registry, { name: 'nettel_rollup_fold_buckets_total', help: 'Pending 5-minute buckets of workspaces folded into the 5-minute and hourly flow rollups' }),
    rounds: counter(registry, {
      name: 'nettel_rollup_fold_rounds_total',
      help: 'Rounds of the rollup fold, by outcome: folded, idle (nothing closed was pending), not_holder (another process holds the fold lock), failed (run again at the next round)',
      labelNames: ['outcome'] as const,
    }),
  };
}

/**
 * Folds the minute rollups into the 5-minute and hourly levels every
 * interval, in the stream-workers role (storage/rollup-fold.ts): every
 * process of the role tries, the one that holds the lock folds. A round that
 * fails is counted and logged, and its buckets stay pending (the analysts'
 * planner reads them from the minutes meanwhile) until a later round folds them.
 */
export class RollupFolder {
  private readonly rounds: PeriodicRound;
  private readonly metrics: ReturnType<typeof rollupFoldMetrics>;

  /**
   * `refoldAfterMs`: how long a round leaves a bucket it folded before, when
   * late rows made it pending again. Each fold of a bucket reads all of its
   * raw flows (the dimension levels' source), and when the writers lag
   * behind a load every insert lands in a closed bucket: folded again every
   * round, it held the one chDB session over a second a round (bench/results/
   * 2026-11-30-flood-statements.md: 10 % of its time in the flood scenario).
   * Meanwhile the analysts' planner reads the pending bucket from the
   * minutes, so answers stay exact; `settle()` folds at once.
   */
  constructor(
    config: { intervalMs: number; refoldAfterMs: number },
    private readonly deps: RollupFolderDeps,
  ) {
    this.metrics = rollupFoldMetrics(deps.registry);
    this.refoldAfterMs = config.refoldAfterMs;
    this.rounds = new PeriodicRound(config.intervalMs, () => this.round());
  }

  private readonly refoldAfterMs: number;

  start(): Promise<void> {
    this.rounds.start();
    return Promise.resolve();
  }

  stop(): Promise<void> {
    return this.rounds.stop();
  }

  /**
   * Folds until a fold finds nothing (tests, and tools that want the levels
   * folded before they read them; `openToo` folds the open buckets too): a
   * bucket marked in the very second a fold read the time stays pending for
   * the next (storage/rollup-fold.ts). Under the lock, as the rounds fold.
   */
  async settle(opts: { openToo?: boolean } = {}): Promise<void> {
    for (;;) {
      const folded = await this.foldUnderLock(opts);
      if (!folded?.length) return;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  /** One fold if this process gets the lock; undefined when another holds it. */
  private foldUnderLock(opts: { openToo?: boolean; refoldAfterMs?: number } = {}) {
    return this.deps.locks.tryWithLock(rollupFoldLock, () => this.deps.fold.foldOnce(opts));
  }

  private async round(): Promise<void> {
    try {
      const folded = await this.foldUnderLock({ refoldAfterMs: this.refoldAfterMs });
      const outcome = folded === undefined ? 'not_holder' : folded.length > 0 ? 'folded' : 'idle';
      this.metrics.rounds.inc({ outcome });
      if (folded) this.metrics.buckets.inc(folded.length);
    } catch (err) {
      this.metrics.rounds.inc({ outcome: 'failed' });
      this.deps.log.error({ err }, 'the rollup fold failed; its buckets stay pending and are read from the minutes until a later round');
    }
  }
}
