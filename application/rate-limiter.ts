import { AppError } from '../core/errors';
import { TokenBuckets } from '../core/token-bucket';
import { counter, type Registry } from '../observability/metrics';

export interface RateLimitConfig {
  /** Telemetry records a workspace may post per second through this API process; 0 means no limit. */
  recordsPerSecond: number;
  /** How many seconds of records a workspace may post at once. */
  burstSeconds: number;
}

const maxTrackedWorkspaces = 100_000;

/** Per-workspace limits on telemetry records, answered with 429 RATE_LIMITED and Retry-After. */
export class RateLimiter {
  private readonly buckets: TokenBuckets;
  private readonly limited;

  constructor(
    private readonly config: RateLimitConfig,
    registry: Registry,
    private readonly now: () => number = Date.now,
  ) {
    this.buckets = new TokenBuckets(config.recordsPerSecond, config.recordsPerSecond * config.burstSeconds, maxTrackedWorkspaces);
    this.limited = counter(registry, {
      name: 'nettel_rate_limited_requests_total',
      help: 'Ingest requests refused with 429 because their workspace was over its record rate',
    });
  }

  /** Gives back a refused or failed request's records (validation error, JetStream unavailable). */
  refundRecords(orgId: string, records: number): void {
    this.buckets.peek(orgId)?.refund(records);
  }

  takeRecords(orgId: string, records: number): void {
    if (!this.config.recordsPerSecond) return;
    const taken = this.buckets.get(orgId, this.now()).take(records, this.now());
    if (!taken.ok) {
      this.limited.inc();
      throw new AppError('RATE_LIMITED', `the workspace is over ${this.config.recordsPerSecond} telemetry records per second`, {
        retryAfterSeconds: Math.max(1, Math.ceil(taken.retryAfterMs / 1000)),
      });
    }
  }
}
