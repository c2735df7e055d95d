import { AppError } from '../core/errors';
import { counter, type Registry } from '../observability/metrics';
import type { QueryBudgetBucket } from '../streams/query-budget-bucket';

export interface QueryBudgetConfig {
  /** Cost units a workspace regains a minute (QUERY_BUDGET_UNITS_PER_MINUTE); 0: no budget. */
  unitsPerMinute: number;
  /** Cost units a workspace may spend at once (QUERY_BUDGET_BURST_UNITS). */
  burstUnits: number;
}

/**
 * Analysts' query cost (core/query-cost.ts) per workspace, shared by every
 * API process through the bucket: a workspace's keys and sessions, whichever
 * process serves them, spend one budget, so minting keys or opening sessions
 * buys no more. Past it, 429 RATE_LIMITED with Retry-After, counted.
 */
export class QueryBudget {
  private readonly refused;

  constructor(
    private readonly deps: { config: QueryBudgetConfig; bucket: QueryBudgetBucket; registry: Registry; now?: () => number },
  ) {
    this.refused = counter(deps.registry, {
      name: 'nettel_query_budget_refused_total',
      help: "Analyst queries and audit verifications refused with 429 because their workspace's query budget was spent",
    });
  }

  private readonly now = () => (this.deps.now ?? Date.now)();

  /** Takes `cost` from the budget of `owner` (a workspace, or the platform admin), or throws 429 with the seconds until it could. */
  async take(owner: string, cost: number): Promise<void> {
    const { unitsPerMinute, burstUnits } = this.deps.config;
    if (!unitsPerMinute) return;
    const waitMs = await this.deps.bucket.take(owner, cost, this.now);
    if (waitMs === 0) return;
    this.refused.inc();
    throw new AppError(
      'RATE_LIMITED',
      `the workspace has spent its query budget (${unitsPerMinute} units a minute, ${burstUnits} at once, shared by all its keys and sessions; this request costs ${cost}): ` +
        'retry after the time Retry-After gives, or ask for a shorter range or for dimensions a rollup keeps',
      { retryAfterSeconds: Math.max(1, Math.ceil(waitMs / 1000)) },
    );
  }

  /** Gives back what a read took and did not use. */
  async refund(owner: string, units: number): Promise<void> {
    if (units > 0 && this.deps.config.unitsPerMinute) await this.deps.bucket.refund(owner, units, this.now);
  }
}
