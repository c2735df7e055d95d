import type Router from '@koa/router';
import type { Context } from 'koa';
import { z } from 'zod';
import { flowFilterCatalog } from '../../core/analytics/filter/catalog';
import { valuePrefix, wordCompletions, type Completion } from '../../core/analytics/filter/complete';
import { validationError } from '../../core/errors';
import { isFlowDimension, type FlowDimension } from '../../core/flow-dimensions';
import { planFlowQuery } from '../../core/flow-query';
import { queryCost } from '../../core/query-cost';
import type { FlowTopRow } from '../../storage/flow-analytics';
import { orgOf, requirePermission } from '../auth';
import type { ApiDeps } from '../deps';
import { chargeQuery } from '../query-budget';
import { parseOrThrow, singleQuery } from '../validation';

/**
 * GET /v1/telemetry/flows/complete: what the console's filter box offers.
 * With `dimension`, the values of it the workspace's flows carried lately,
 * most bytes first, whose text starts with `prefix` (any case): the last day
 * from the rollups when one keeps the dimension, else the last hour of the
 * raw flows (a lookup typed at each key must stay cheap). Without it, the
 * dimension names and keywords that start with `prefix`. A value lookup is
 * paid from the query budget like any top-N over that range (1 unit on the
 * rollups, 2 on the raw flows); a name lookup reads nothing and costs none.
 */
const hour = 3_600_000;
export const completeSchema = z
  .object({
    dimension: z.string().max(64).optional(),
    prefix: z.string().max(256).default(''),
    limit: z.coerce.number().int().min(1).max(100).default(20),
  })
  .strict();

const shownValue = (row: FlowTopRow): string => row.text[0] ?? '';

/** A value's label: an AS number with its name, else the value itself. */
function labelOf(row: FlowTopRow, dimension: FlowDimension): string {
  const name = row.names?.[`${dimension}_name`];
  return name ? `AS${shownValue(row)} ${name}` : shownValue(row);
}

/** An absent value (no exporter, no country, no name) is nothing to offer. */
const present = (text: string) => text !== '' && text !== '::';

async function valueCompletions(ctx: Context, deps: ApiDeps, dimension: FlowDimension, prefix: string, limit: number): Promise<Completion[]> {
  const plan = planFlowQuery([dimension], []);
  const to = Date.now();
  const range = { from: to - (plan.source === 'raw' ? hour : 24 * hour), to };
  await chargeQuery(ctx, deps.queryBudget, queryCost(plan.source, range));
  const scope = { orgId: orgOf(ctx), range, filters: [], plan };
  // One more than asked: the absent value may be among them.
  const top = await deps.analytics.topFlows(scope, [dimension], 'bytes', limit + 1, { prefix: valuePrefix(flowFilterCatalog, dimension, prefix) });
  return top.rows
    .filter((r) => present(shownValue(r)))
    .slice(0, limit)
    .map((r) => ({ value: shownValue(r), label: labelOf(r, dimension), kind: 'value' }));
}

export function registerFlowCompleteRoute(router: Router, deps: ApiDeps): void {
  router.get('/v1/telemetry/flows/complete', requirePermission('read'), async (ctx) => {
    const q = parseOrThrow(completeSchema, singleQuery(ctx.query), 'query');
    if (q.dimension === undefined) {
      ctx.body = { items: wordCompletions(flowFilterCatalog, q.prefix, q.limit) };
      return;
    }
    if (!isFlowDimension(q.dimension)) {
      throw validationError('invalid dimension', [{ path: 'dimension', message: `${JSON.stringify(q.dimension)} is not a dimension (GET without dimension lists them)` }]);
    }
    ctx.body = { items: await valueCompletions(ctx, deps, q.dimension, q.prefix, q.limit) };
  });
}
