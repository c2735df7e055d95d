/**
 * A wait that `wake()` ends early: a loop's pause between tries, cut short
 * by its stop() so a stopping worker does not sit out a back-off.
 */
export class Pause {
  private current?: () => void;

  for(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.current = undefined;
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.current = done;
    });
  }

  /** Ends the wait under way, if any. */
  wake(): void {
    this.current?.();
  }
}
