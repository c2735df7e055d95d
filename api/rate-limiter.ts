import { AppError } from '../core/errors';
import { TokenBucket } from '../core/token-bucket';
import type { Metrics } from '../service/metrics';

export interface RateLimitConfig {
  /** Telemetry records a workspace may post per second through this API process; 0 means no limit. */
  recordsPerSecond: number;
  /** How many seconds of records a workspace may post at once. */
  burstSeconds: number;
}

const maxTrackedWorkspaces = 100_000;

/** Per-workspace limits on telemetry records, answered with 429 RATE_LIMITED and Retry-After. */
export class RateLimiter {
  private readonly buckets = new Map<string, TokenBucket>();

  constructor(
    private readonly config: RateLimitConfig,
    private readonly metrics: Metrics,
    private readonly now: () => number = Date.now,
  ) {}

  /** Gives back a refused or failed request's records (validation error, JetStream unavailable). */
  refundRecords(orgId: string, records: number): void {
    this.buckets.get(orgId)?.refund(records);
  }

  takeRecords(orgId: string, records: number): void {
    if (!this.config.recordsPerSecond) return;
    let bucket = this.buckets.get(orgId);
    if (!bucket) {
      if (this.buckets.size >= maxTrackedWorkspaces) this.buckets.clear();
      bucket = new TokenBucket(this.config.recordsPerSecond, this.config.recordsPerSecond * this.config.burstSeconds, this.now());
      this.buckets.set(orgId, bucket);
    }
    const taken = bucket.take(records, this.now());
    if (!taken.ok) {
      this.metrics.rateLimited.inc();
      throw new AppError('RATE_LIMITED', `the workspace is over ${this.config.recordsPerSecond} telemetry records per second`, {
        retryAfterSeconds: Math.max(1, Math.ceil(taken.retryAfterMs / 1000)),
      });
    }
  }
}
