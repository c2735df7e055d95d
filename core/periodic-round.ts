/**
 * A job run every interval, one round at a time: a round asked for while one
 * runs (by the timer or by `runNow`) waits for that one instead of running
 * beside it, and a slow round delays the next. The timer does not keep the
 * process alive. Used by the retention job and the reconcilers.
 */
export class PeriodicRound {
  private timer?: NodeJS.Timeout;
  private round?: Promise<void>;
  private next?: Promise<void>;

  constructor(
    private readonly intervalMs: number,
    private readonly run: () => Promise<unknown>,
  ) {}

  /** Starts the timer; with `now`, the first round runs at once instead of after an interval. */
  start(opts: { now?: boolean } = {}): void {
    this.timer = setInterval(() => void this.runNow(), this.intervalMs);
    this.timer.unref();
    if (opts.now) void this.runNow();
  }

  /** One round: the running one, or a new one. */
  runNow(): Promise<void> {
    this.round ??= this.run()
      .then(() => undefined)
      .finally(() => (this.round = undefined));
    return this.round;
  }

  /**
   * A round that starts after this call: one running now may have read its
   * input before the caller's change, so it is waited for and one more runs
   * (shared by every caller meanwhile).
   */
  runFresh(): Promise<void> {
    if (!this.round) return this.runNow();
    this.next ??= this.round
      .catch(() => undefined)
      .then(() => {
        this.next = undefined;
        return this.runNow();
      });
    return this.next;
  }

  /** Stops the timer and waits for the round in flight. */
  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.round;
  }
}
