import { AppError } from '../core/errors';
import { TokenBuckets } from '../core/token-bucket';
import { counter, type Registry } from '../observability/metrics';

export interface RateLimitConfig {
  /** Telemetry records a workspace may post per second through this API process; 0 means no limit. */
  recordsPerSecond: number;
  /** How many seconds of records a workspace may post at once. */
  burstSeconds: number;
}

/** A budget of cost units per key: what it regains per second (0: no limit) and what it may spend at once. */
export interface Budget {
  ratePerSecond: number;
  capacity: number;
}

/** What a limiter counts and how it says no. */
export interface LimiterSpec {
  metric: { name: string; help: string };
  /** The refusal's message, given the cost of what was refused. */
  refusal: (cost: number) => string;
}

const maxTrackedKeys = 100_000;

/**
 * Per-key budgets (a workspace, an API key) kept in token buckets, in this
 * API process: what is over its key's budget is refused with 429
 * RATE_LIMITED and Retry-After, and counted. The same limiter, with other
 * parameters, meters telemetry records per workspace and test sends of
 * webhooks (analysts' query cost is a budget shared by the API processes:
 * application/query-budget.ts).
 */
export class RateLimiter {
  private readonly buckets: TokenBuckets;
  private readonly limited;

  constructor(
    private readonly budget: Budget,
    private readonly spec: LimiterSpec,
    registry: Registry,
    private readonly now: () => number = Date.now,
  ) {
    this.buckets = new TokenBuckets(budget.ratePerSecond, budget.capacity, maxTrackedKeys);
    this.limited = counter(registry, spec.metric);
  }

  /** Takes `cost` from the key's budget, or throws 429 RATE_LIMITED with the seconds until it could. */
  take(key: string, cost: number): void {
    if (!this.budget.ratePerSecond) return;
    const taken = this.buckets.get(key, this.now()).take(cost, this.now());
    if (!taken.ok) {
      this.limited.inc();
      throw new AppError('RATE_LIMITED', this.spec.refusal(cost), { retryAfterSeconds: Math.max(1, Math.ceil(taken.retryAfterMs / 1000)) });
    }
  }

  /** Gives back what a refused or failed request took (validation error, engine unavailable, work not done). */
  refund(key: string, cost: number): void {
    if (cost > 0) this.buckets.peek(key)?.refund(cost);
  }
}

/** Telemetry records per workspace: `recordsPerSecond`, `burstSeconds` of them at once. */
export function recordRateLimiter(config: RateLimitConfig, registry: Registry, now?: () => number): RateLimiter {
  const budget = { ratePerSecond: config.recordsPerSecond, capacity: config.recordsPerSecond * config.burstSeconds };
  return new RateLimiter(
    budget,
    {
      metric: { name: 'nettel_rate_limited_requests_total', help: 'Ingest requests refused with 429 because their workspace was over its record rate' },
      refusal: () => `the workspace is over ${config.recordsPerSecond} telemetry records per second`,
    },
    registry,
    now,
  );
}
