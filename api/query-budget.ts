import type { Context } from 'koa';
import type { QueryBudget } from '../application/query-budget';
import { principalOf } from './auth';

/** Whose budget a read spends: the workspace it reads (every key and session of it share one), or the platform admin's. */
const budgetOwnerOf = (ctx: Context): string => {
  const principal = principalOf(ctx);
  return principal.kind === 'workspace' ? `w.${principal.orgId}` : 'platform';
};

/**
 * Takes a read's cost from its workspace's query budget, or throws 429
 * RATE_LIMITED with Retry-After; returns what gives back the part of the
 * cost that the read did not use.
 */
export async function chargeQuery(ctx: Context, budget: QueryBudget, cost: number): Promise<(unused: number) => Promise<void>> {
  const owner = budgetOwnerOf(ctx);
  await budget.take(owner, cost);
  return (unused) => budget.refund(owner, unused);
}
