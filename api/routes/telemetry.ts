import type Router from '@koa/router';
import { z } from 'zod';
import { validationError } from '../../core/errors';
import { queryCost } from '../../core/query-cost';
import { orgOf, requirePermission } from '../auth';
import { metricSeriesCsv } from '../csv-answer';
import type { ApiDeps } from '../deps';
import { labelSchema } from '../../core/telemetry';
import { chargeQuery } from '../query-budget';
import { parseOrThrow, singleQuery } from '../validation';
import { boundedRange, rangeFields, registerFlowAnalyticsRoutes } from './flow-analytics';

/**
 * Analysts' reads. Every query is bounded: a time range (default the last
 * hour; at most ANALYTICS_MAX_RAW_RANGE_DAYS for raw flows,
 * ANALYTICS_MAX_RANGE_DAYS for rollups), a row limit, its key's query budget
 * and the engine limits. Rollup reads say which resolution answered them.
 * The flow reads (flows, top keys, traffic series) are in flow-analytics.ts.
 */
const day = 24 * 3_600_000;

export const seriesSchema = z
  .object({
    ...rangeFields,
    service: labelSchema,
    metric: z.string().trim().min(1).max(128),
    step: z.coerce.number().int().min(60).max(86_400).default(60).refine((s) => s % 60 === 0, 'step is a whole number of minutes, in seconds'),
  })
  .strict();

export function registerTelemetryRoutes(router: Router, deps: ApiDeps): void {
  const guard = requirePermission('read');

  registerFlowAnalyticsRoutes(router, deps);

  router.get('/v1/telemetry/metrics/series', guard, metricSeriesCsv, async (ctx) => {
    const q = parseOrThrow(seriesSchema, singleQuery(ctx.query), 'query');
    const range = boundedRange(q, deps.analyticsLimits.maxRangeDays * day);
    if ((range.to - range.from) / (q.step * 1000) > 10_000) {
      throw validationError('at most 10,000 points: widen the step or narrow the range', [{ path: 'step', message: 'too many points' }]);
    }
    await chargeQuery(ctx, deps.queryBudget, queryCost('metrics', range));
    const series = await deps.analytics.metricSeries(orgOf(ctx), q.service, q.metric, q.step * 1000, range);
    ctx.body = { data: series.data, resolution: series.resolution };
  });
}
