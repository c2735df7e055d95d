/**
 * A token bucket: `ratePerSecond` tokens a second, at most `capacity` held.
 * A take larger than the capacity passes only when the bucket is full, and
 * leaves it in debt, so a large batch is slowed, never refused for ever.
 */
export class TokenBucket {
  private tokens: number;
  private updatedAt: number;

  constructor(
    private readonly ratePerSecond: number,
    private readonly capacity: number,
    now: number,
  ) {
    this.tokens = capacity;
    this.updatedAt = now;
  }

  /** Takes `n` tokens, or says how many milliseconds until it could. */
  take(n: number, now: number): { ok: true } | { ok: false; retryAfterMs: number } {
    this.tokens = Math.min(this.capacity, this.tokens + ((now - this.updatedAt) / 1000) * this.ratePerSecond);
    this.updatedAt = now;
    const needed = Math.min(n, this.capacity);
    if (this.tokens >= needed) {
      this.tokens -= n;
      return { ok: true };
    }
    return { ok: false, retryAfterMs: Math.ceil(((needed - this.tokens) / this.ratePerSecond) * 1000) };
  }

  /** Gives back tokens taken for work that was then not done. */
  refund(n: number): void {
    this.tokens = Math.min(this.capacity, this.tokens + n);
  }
}
