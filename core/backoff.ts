/**
 * The one doubling back-off of the code base: re-opening a consumer, giving a
 * failed message back, restarting an engine or GoFlow2, retrying a webhook
 * delivery all wait `firstMs` after a first failure, twice as long after each
 * further one, never more than `maxMs`.
 */
export interface Backoff {
  firstMs: number;
  maxMs: number;
}

/** The wait after `failures` failures in a row (1 for the first; 0 or less counts as 1). */
export function backoffDelayMs(backoff: Backoff, failures: number): number {
  const doublings = Math.min(Math.max(failures - 1, 0), 40);
  return Math.min(backoff.maxMs, backoff.firstMs * 2 ** doublings);
}
