import { AppError } from '../core/errors';
import { TokenBuckets } from '../core/token-bucket';
import { counter, type Registry } from '../observability/metrics';

export interface AuthThrottleConfig {
  /** Failed authentications a client address may make in a minute (and at once); 0 turns the throttle off. */
  failuresPerMinute: number;
}

const maxTrackedAddresses = 100_000;

/**
 * Throttles failed authentication per client address: each failure takes a
 * token from the address's bucket, which refills at `failuresPerMinute`; a
 * bad credential from an address with none left is answered 429 instead of
 * 401. A valid credential is never refused (api/auth.ts checks it first): an
 * address may be a proxy or a NAT that many clients share, and one of them
 * failing must not lock the others out. So the throttle slows and flags a
 * client that keeps failing; what makes keys unguessable is their 256-bit
 * secret. A success takes nothing.
 */
export class AuthThrottle {
  private readonly failures: TokenBuckets;
  private readonly throttled;

  constructor(
    private readonly config: AuthThrottleConfig,
    registry: Registry,
    private readonly now: () => number = Date.now,
  ) {
    this.failures = new TokenBuckets(config.failuresPerMinute / 60, config.failuresPerMinute, maxTrackedAddresses);
    this.throttled = counter(registry, {
      name: 'nettel_auth_throttled_requests_total',
      help: 'Requests refused with 429 because their client address failed authentication too often',
    });
  }

  /** Refuses (429) a failing client that has used up its failures; a client without failures has no bucket. */
  check(client: string): void {
    if (!this.config.failuresPerMinute) return;
    const waitMs = this.failures.peek(client)?.waitMs(1, this.now()) ?? 0;
    if (waitMs > 0) {
      this.throttled.inc();
      throw new AppError('RATE_LIMITED', 'too many failed authentications from this address, retry later', {
        retryAfterSeconds: Math.max(1, Math.ceil(waitMs / 1000)),
      });
    }
  }

  recordFailure(client: string): void {
    if (!this.config.failuresPerMinute) return;
    this.failures.get(client, this.now()).take(1, this.now());
  }
}
