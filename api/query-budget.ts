import type { Context } from 'koa';
import type { RateLimiter } from '../application/rate-limiter';
import { principalOf } from './auth';

/**
 * Takes a read's cost from its API key's query budget, or throws 429
 * RATE_LIMITED with Retry-After; returns what gives back the part of the
 * cost that the read did not use.
 */
export function chargeQuery(ctx: Context, budget: RateLimiter, cost: number): (unused: number) => void {
  const key = principalOf(ctx).keyId;
  budget.take(key, cost);
  return (unused) => budget.refund(key, unused);
}
