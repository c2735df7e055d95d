/**
 * Calls `step(i)` on schedule, every `intervalMs` from `started`, until
 * `stop()`: a step that comes late runs at once and the schedule is kept (a
 * load posted on schedule, not paced by its answers). `stop()` cuts the wait
 * for the next step short (at a low rate it is long) and resolves once the
 * loop has ended; no step runs after it was called.
 */
export function pacedLoop(intervalMs: number, step: (i: number) => void, started = Date.now()): { stop(): Promise<void> } {
  let running = true;
  let wake: () => void = () => undefined;
  const loop = (async () => {
    for (let i = 0; running; i += 1) {
      const due = started + i * intervalMs;
      if (due > Date.now()) {
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, due - Date.now());
          wake = () => {
            clearTimeout(timer);
            resolve();
          };
        });
      }
      if (!running) break;
      step(i);
    }
  })();
  return {
    async stop() {
      running = false;
      wake();
      await loop;
    },
  };
}
