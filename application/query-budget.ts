import { AppError, unavailable } from '../core/errors';
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
  private readonly errors;

  constructor(
    private readonly deps: { config: QueryBudgetConfig; bucket: QueryBudgetBucket; registry: Registry; now?: () => number },
  ) {
    this.refused = counter(deps.registry, {
      name: 'nettel_query_budget_refused_total',
      help: "Analyst queries and audit verifications refused with 429 because their workspace's query budget was spent",
    });
    this.errors = counter(deps.registry, {
      name: 'nettel_query_budget_errors_total',
      help: 'Query budget reads or writes that failed in NATS, by what was asked (take: the read answered 503; refund: the units were not given back)',
      labelNames: ['op'] as const,
    });
  }

  private readonly now = () => (this.deps.now ?? Date.now)();

  /** Takes `cost` from the budget of `owner` (a workspace, or the platform admin), or throws 429 with the seconds until it could. */
  async take(owner: string, cost: number): Promise<void> {
    const { unitsPerMinute, burstUnits } = this.deps.config;
    if (!unitsPerMinute) return;
    let waitMs: number;
    try {
      waitMs = await this.deps.bucket.take(owner, cost, this.now);
    } catch (err) {
      // Closed, not open: a read that cannot be paid for waits for NATS, as ingestion does.
      this.errors.inc({ op: 'take' });
      throw unavailable('NATS (the query budget)', err);
    }
    if (waitMs === 0) return;
    this.refused.inc();
    throw new AppError(
      'RATE_LIMITED',
      `the workspace has spent its query budget (${unitsPerMinute} units a minute, ${burstUnits} at once, shared by all its keys and sessions; this request costs ${cost}): ` +
        'retry after the time Retry-After gives, or ask for a shorter range or for dimensions a rollup keeps',
      { retryAfterSeconds: Math.max(1, Math.ceil(waitMs / 1000)) },
    );
  }

  /** Gives back what a read took and did not use; a refund that fails leaves the workspace less budget for a while, never more, and the read's answer stands. */
  async refund(owner: string, units: number): Promise<void> {
    if (units <= 0 || !this.deps.config.unitsPerMinute) return;
    await this.deps.bucket.refund(owner, units, this.now).catch(() => this.errors.inc({ op: 'refund' }));
  }
}
