import { setNewest } from './bounded-map';

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

  private refill(now: number): void {
    this.tokens = Math.min(this.capacity, this.tokens + ((now - this.updatedAt) / 1000) * this.ratePerSecond);
    this.updatedAt = now;
  }

  /** Takes `n` tokens, or says how many milliseconds until it could. */
  take(n: number, now: number): { ok: true } | { ok: false; retryAfterMs: number } {
    const waitMs = this.waitMs(n, now);
    if (waitMs > 0) return { ok: false, retryAfterMs: waitMs };
    this.tokens -= n;
    return { ok: true };
  }

  /** Milliseconds until `n` tokens could be taken (0: now), taking none. */
  waitMs(n: number, now: number): number {
    this.refill(now);
    const needed = Math.min(n, this.capacity);
    return this.tokens >= needed ? 0 : Math.ceil(((needed - this.tokens) / this.ratePerSecond) * 1000);
  }

  /** Gives back tokens taken for work that was then not done. */
  refund(n: number): void {
    this.tokens = Math.min(this.capacity, this.tokens + n);
  }
}

/**
 * One bucket per key (a workspace, a client address), at most `maxKeys` of
 * them: past that the bucket used least recently is dropped, so a flood of
 * new keys cannot grow memory, nor reset the buckets of the keys in use.
 */
export class TokenBuckets {
  private readonly buckets = new Map<string, TokenBucket>();

  constructor(
    private readonly ratePerSecond: number,
    private readonly capacity: number,
    private readonly maxKeys: number,
  ) {}

  /** The key's bucket, created full when the key is new. */
  get(key: string, now: number): TokenBucket {
    // Set again as the newest: the least recently used key is the first to go.
    const bucket = this.buckets.get(key) ?? new TokenBucket(this.ratePerSecond, this.capacity, now);
    setNewest(this.buckets, key, bucket, this.maxKeys);
    return bucket;
  }

  /** The key's bucket if it has one: a key without one has all its tokens. */
  peek(key: string): TokenBucket | undefined {
    return this.buckets.get(key);
  }

  get size(): number {
    return this.buckets.size;
  }
}

/** A token bucket's state as stored outside the process (a shared budget): what it held at `at` (ms). */
export interface BucketLevel {
  tokens: number;
  at: number;
}

/**
 * The same bucket as TokenBucket, over a stored level (absent: full): the
 * level after taking `n` at `now`, or how many milliseconds until it could.
 * A take larger than the capacity passes only when the bucket is full.
 */
export function takeFromLevel(
  level: BucketLevel | undefined,
  n: number,
  now: number,
  budget: { ratePerSecond: number; capacity: number },
): { ok: true; level: BucketLevel } | { ok: false; retryAfterMs: number } {
  const tokens = refilledTokens(level, now, budget);
  const needed = Math.min(n, budget.capacity);
  if (tokens < needed) return { ok: false, retryAfterMs: Math.ceil(((needed - tokens) / budget.ratePerSecond) * 1000) };
  return { ok: true, level: { tokens: tokens - n, at: now } };
}

/** The level after giving back `n` tokens at `now` (never above the capacity). */
export function refundToLevel(level: BucketLevel | undefined, n: number, now: number, budget: { ratePerSecond: number; capacity: number }): BucketLevel {
  return { tokens: Math.min(budget.capacity, refilledTokens(level, now, budget) + n), at: now };
}

function refilledTokens(level: BucketLevel | undefined, now: number, budget: { ratePerSecond: number; capacity: number }): number {
  if (!level) return budget.capacity;
  // A clock behind the stored instant (another process's) refills nothing rather than draining.
  return Math.min(budget.capacity, level.tokens + (Math.max(0, now - level.at) / 1000) * budget.ratePerSecond);
}
