import type Router from '@koa/router';
import type { Context } from 'koa';
import { z } from 'zod';
import { readFilter, type CheckedFilter } from '../../core/analytics/filter/check';
import { flowFilterCatalog } from '../../core/analytics/filter/catalog';
import { validationError } from '../../core/errors';
import { isFlowDimension } from '../../core/flow-dimensions';
import {
  defaultStep,
  maxSeriesPoints,
  parseDimensionList,
  parseFilters,
  planFlowQuery,
  rawReason,
  rollupRangeDays,
  seriesPlan,
  stepCount,
  type FlowFilter,
  type FlowQueryPlan,
} from '../../core/flow-query';
import { flowUnits, previousRange } from '../../core/analytics/rates';
import { flowQueryCost, queryCost } from '../../core/query-cost';
import { iso } from '../../core/time';
import type { EnrichedFlowRecord } from '../../storage/analytics-repo';
import type { FlowKey, FlowTopRow } from '../../storage/flow-analytics';
import { orgOf, requirePermission } from '../auth';
import { flowSeriesCsv, topCsv } from '../csv-answer';
import type { ApiDeps } from '../deps';
import { decodeCursor, encodeCursor } from '../pagination';
import { chargeQuery } from '../query-budget';
import { parseOrThrow, singleQuery, timeParam } from '../validation';
import { registerFlowCompleteRoute } from './flow-complete';
import { keyId, rangeView, segmentView, seriesView, topRowView } from './flow-views';

/**
 * Analysts' flow reads, as in Akvorado's visualize view: the flows
 * themselves, top keys and traffic series, each filtered on any dimension
 * (core/flow-query.ts). Every query is bounded by a time range (default the
 * last hour; at most ANALYTICS_MAX_RANGE_DAYS, 31 by default, when rollups
 * answer it, ANALYTICS_MAX_RAW_RANGE_DAYS, 7, when it reads the raw flows) and
 * a row or point limit; it is paid for from its key's query budget
 * (core/query-cost.ts) before it runs, and runs under the engine limits
 * (storage/query-limits.ts).
 */
const hour = 3_600_000;
const day = 24 * hour;
export const rangeFields = { from: timeParam.optional(), to: timeParam.optional() };

/** The asked range (default the last hour), at most `maxMs` long; `why` says what bounds it. */
export function boundedRange(q: { from?: number; to?: number }, maxMs: number, why = '') {
  const to = q.to ?? Date.now();
  const from = q.from ?? to - hour;
  if (from >= to) throw validationError('from must be before to', [{ path: 'from', message: 'must be before to' }]);
  if (to - from > maxMs) {
    throw validationError(`the time range is at most ${maxMs / day} days${why}`, [{ path: 'from', message: 'range too long' }]);
  }
  return { from, to };
}

/** The range of a query on flows: rollups answer the longer range, the raw flows the shorter (the error says which dimensions need them). */
function flowRange(q: { from?: number; to?: number }, plan: FlowQueryPlan, limits: ApiDeps['analyticsLimits']) {
  if (plan.source !== 'raw') return boundedRange(q, limits.maxRangeDays * day);
  return boundedRange(q, limits.maxRawRangeDays * day, ` when the query reads the raw flows (${rawReason(plan)})`);
}

/**
 * A flow route's query: its filter parameters parsed (one per dimension, and
 * `filter`, the filter language of core/analytics/filter/), the others left
 * to the route's schema.
 */
export function flowQuery(ctx: Context): { params: Record<string, string>; filters: FlowFilter[]; filter?: CheckedFilter } {
  const params: Record<string, string> = {};
  const filterParams: Record<string, string> = {};
  for (const [name, value] of Object.entries(singleQuery(ctx.query))) (isFlowDimension(name) ? filterParams : params)[name] = value;
  const { filter: text, ...rest } = params;
  const filter = text === undefined ? undefined : readFilter(text, flowFilterCatalog);
  return { params: rest, filters: parseFilters(filterParams), ...(filter ? { filter } : {}) };
}

export const flowsSchema = z
  .object({ ...rangeFields, limit: z.coerce.number().int().min(1).max(1000).default(100), cursor: z.string().max(512).optional() })
  .strict();
/** `previous=true`: the same query over the period just before, beside the current one. */
const previousParam = z.enum(['true', 'false']).default('false').transform((v) => v === 'true');
/** `unit`: what a rate counts a second (a row's `rate`, a point's `rate`); a series' split and a top-N without `metric` rank by it. */
const unitParam = z.enum(flowUnits).optional();

export const topSchema = z
  .object({
    ...rangeFields,
    by: z.string().default('dst_ip'),
    metric: z.enum(flowUnits).optional(),
    unit: unitParam,
    limit: z.coerce.number().int().min(1).max(1000).default(10),
    totals: z.enum(['metric', 'all']).default('metric'),
    previous: previousParam,
  })
  .strict();
export const seriesSchema = z
  .object({
    ...rangeFields,
    step: z.coerce.number().int().min(60).max(rollupRangeDays * 86_400).refine((s) => s % 60 === 0, 'step is a whole number of minutes, in seconds').optional(),
    split_by: z.string().optional(),
    limit: z.coerce.number().int().min(1).max(20).default(5),
    unit: unitParam,
    previous: previousParam,
  })
  .strict();
const flowCursor = z.object({ ts: z.number().int(), event_id: z.string().max(64) });

type Guard = ReturnType<typeof requirePermission>;

const flowView = (r: EnrichedFlowRecord) => ({
  ...r,
  ts: iso(r.ts),
  flow_start: r.flow_start === null ? null : iso(r.flow_start),
  flow_end: r.flow_end === null ? null : iso(r.flow_end),
});

function registerFlows(router: Router, deps: ApiDeps, guard: Guard): void {
  router.get('/v1/telemetry/flows', guard, async (ctx) => {
    const { params, filters, filter } = flowQuery(ctx);
    const q = parseOrThrow(flowsSchema, params, 'query');
    const range = boundedRange(q, deps.analyticsLimits.maxRawRangeDays * day);
    const after = decodeCursor(q.cursor, flowCursor);
    await chargeQuery(ctx, deps.queryBudget, queryCost('raw', range));
    const rows = await deps.analytics.flows(orgOf(ctx), range, filters, q.limit + 1, after, filter);
    const page = rows.slice(0, q.limit);
    const last = page[page.length - 1];
    ctx.body = {
      data: page.map(flowView),
      next_cursor: rows.length > q.limit && last ? encodeCursor({ ts: last.ts, event_id: last.event_id }) : null,
    };
  });
}

function registerTop(router: Router, deps: ApiDeps, guard: Guard): void {
  router.get('/v1/telemetry/flows/top', guard, topCsv, async (ctx) => {
    const { params, filters, filter } = flowQuery(ctx);
    const q = parseOrThrow(topSchema, params, 'query');
    const metric = q.metric ?? q.unit ?? 'bytes';
    const unit = q.unit;
    const by = parseDimensionList(q.by, 'by', 3);
    const plan = planFlowQuery(by, filters, filter);
    const range = flowRange(q, plan, deps.analyticsLimits);
    await chargeQuery(ctx, deps.queryBudget, flowQueryCost(plan.source, range, q.previous));
    const scope = { orgId: orgOf(ctx), range, filters, filter, plan };
    const top = await deps.analytics.topFlows(scope, by, metric, q.limit);
    let previous: Map<string, FlowTopRow> | undefined;
    if (q.previous) {
      // The previous period of the keys ranked now: each row's value then, whatever its rank then.
      const before = await deps.analytics.topFlows({ ...scope, range: previousRange(range) }, by, metric, Math.max(1, top.rows.length), { texts: top.rows.map((r) => r.text) });
      previous = new Map(before.rows.map((r) => [keyId(r), r]));
    }
    ctx.body = {
      data: top.rows.map((r) => topRowView(r, { metric, totals: q.totals, unit, range }, previous)),
      ...(unit ? { unit } : {}),
      resolution: top.resolution,
      segments: top.segments.map(segmentView),
      ...(q.previous ? { previous_range: rangeView(previousRange(range)) } : {}),
    };
  });
}

function registerSeries(router: Router, deps: ApiDeps, guard: Guard): void {
  router.get('/v1/telemetry/flows/series', guard, flowSeriesCsv, async (ctx) => {
    const { params, filters, filter } = flowQuery(ctx);
    const q = parseOrThrow(seriesSchema, params, 'query');
    const unit = q.unit;
    const split = q.split_by === undefined ? undefined : parseDimensionList(q.split_by, 'split_by', 1)[0];
    const planned = planFlowQuery(split ? [split] : [], filters, filter);
    const step = q.step ?? defaultStep(flowRange(q, planned, deps.analyticsLimits));
    // A step no level of the plan's rollups divides reads the raw flows: their range bound and cost apply.
    const plan = seriesPlan(planned, step, [...(split ? [split] : []), ...filters.map((f) => f.dimension), ...(filter?.dimensions ?? [])]);
    const range = flowRange(q, plan, deps.analyticsLimits);
    const seriesCount = split ? q.limit + 1 : 1;
    if (stepCount(range, step * 1000) * seriesCount > maxSeriesPoints) {
      throw validationError('at most 10,000 points (steps × series): widen the step, narrow the range or lower the limit', [
        { path: 'step', message: 'too many points' },
      ]);
    }
    await chargeQuery(ctx, deps.queryBudget, flowQueryCost(plan.source, range, q.previous));
    const scope = { orgId: orgOf(ctx), range, filters, filter, plan };
    const stepMs = step * 1000;
    const answer = await deps.analytics.flowSeries(scope, stepMs, split ? { dimension: split, limit: q.limit, metric: unit ?? 'bytes' } : undefined);
    // The previous period splits by the keys ranked now, so each current series has its own previous points.
    const keys = answer.series.slice(0, answer.texts.length).map((s) => s.key as FlowKey);
    const before = q.previous
      ? await deps.analytics.flowSeries({ ...scope, range: previousRange(range) }, stepMs, split ? { dimension: split, keys, texts: answer.texts } : undefined)
      : undefined;
    ctx.body = {
      step,
      ...(unit ? { unit } : {}),
      resolution: answer.resolution,
      segments: answer.segments.map(segmentView),
      ...(before ? { previous_range: rangeView(previousRange(range)) } : {}),
      series: answer.series.map((s, i) => seriesView(s, range, stepMs, unit, before?.series[i])),
    };
  });
}

/** GET /v1/telemetry/flows, /flows/top, /flows/series and /flows/complete. */
export function registerFlowAnalyticsRoutes(router: Router, deps: ApiDeps): void {
  const guard = requirePermission('read');
  registerFlows(router, deps, guard);
  registerTop(router, deps, guard);
  registerSeries(router, deps, guard);
  registerFlowCompleteRoute(router, deps);
}
