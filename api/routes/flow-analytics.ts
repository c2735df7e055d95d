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
  seriesPoints,
  stepCount,
  type FlowFilter,
  type FlowQueryPlan,
} from '../../core/flow-query';
import { queryCost } from '../../core/query-cost';
import type { Segment } from '../../core/resolution';
import { iso } from '../../core/time';
import type { EnrichedFlowRecord } from '../../storage/analytics-repo';
import type { FlowTopRow } from '../../storage/flow-analytics';
import { orgOf, requirePermission } from '../auth';
import { flowSeriesCsv, topCsv } from '../csv-answer';
import type { ApiDeps } from '../deps';
import { decodeCursor, encodeCursor } from '../pagination';
import { chargeQuery } from '../query-budget';
import { parseOrThrow, singleQuery, timeParam } from '../validation';

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
function flowQuery(ctx: Context): { params: Record<string, string>; filters: FlowFilter[]; filter?: CheckedFilter } {
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
export const topSchema = z
  .object({
    ...rangeFields,
    by: z.string().default('dst_ip'),
    metric: z.enum(['bytes', 'packets', 'flows']).default('bytes'),
    limit: z.coerce.number().int().min(1).max(1000).default(10),
    totals: z.enum(['metric', 'all']).default('metric'),
  })
  .strict();
export const seriesSchema = z
  .object({
    ...rangeFields,
    step: z.coerce.number().int().min(60).max(rollupRangeDays * 86_400).refine((s) => s % 60 === 0, 'step is a whole number of minutes, in seconds').optional(),
    split_by: z.string().optional(),
    limit: z.coerce.number().int().min(1).max(20).default(5),
  })
  .strict();
const flowCursor = z.object({ ts: z.number().int(), event_id: z.string().max(64) });

type Guard = ReturnType<typeof requirePermission>;

const segmentView = (s: Segment) => ({ from: iso(s.from), to: iso(s.to), resolution: s.resolution });

const flowView = (r: EnrichedFlowRecord) => ({
  ...r,
  ts: iso(r.ts),
  flow_start: r.flow_start === null ? null : iso(r.flow_start),
  flow_end: r.flow_end === null ? null : iso(r.flow_end),
});

/** A top row: its dimensions, then the ranked metric and flows (as the API always answered), or every total. */
function topRowView(row: FlowTopRow, metric: 'bytes' | 'packets' | 'flows', totals: 'metric' | 'all') {
  const key = { ...row.key, ...row.names };
  if (totals === 'all') return { ...key, bytes: row.bytes, packets: row.packets, flows: row.flows };
  return metric === 'flows' ? { ...key, flows: row.flows } : { ...key, [metric]: row[metric], flows: row.flows };
}

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
    const by = parseDimensionList(q.by, 'by', 3);
    const plan = planFlowQuery(by, filters, filter);
    const range = flowRange(q, plan, deps.analyticsLimits);
    await chargeQuery(ctx, deps.queryBudget, queryCost(plan.source, range));
    const top = await deps.analytics.topFlows({ orgId: orgOf(ctx), range, filters, filter, plan }, by, q.metric, q.limit);
    ctx.body = {
      data: top.rows.map((r) => topRowView(r, q.metric, q.totals)),
      resolution: top.resolution,
      segments: top.segments.map(segmentView),
    };
  });
}

function registerSeries(router: Router, deps: ApiDeps, guard: Guard): void {
  router.get('/v1/telemetry/flows/series', guard, flowSeriesCsv, async (ctx) => {
    const { params, filters, filter } = flowQuery(ctx);
    const q = parseOrThrow(seriesSchema, params, 'query');
    const split = q.split_by === undefined ? undefined : parseDimensionList(q.split_by, 'split_by', 1)[0];
    const plan = planFlowQuery(split ? [split] : [], filters, filter);
    const range = flowRange(q, plan, deps.analyticsLimits);
    const step = q.step ?? defaultStep(range);
    const seriesCount = split ? q.limit + 1 : 1;
    if (stepCount(range, step * 1000) * seriesCount > maxSeriesPoints) {
      throw validationError('at most 10,000 points (steps × series): widen the step, narrow the range or lower the limit', [
        { path: 'step', message: 'too many points' },
      ]);
    }
    await chargeQuery(ctx, deps.queryBudget, queryCost(plan.source, range));
    const scope = { orgId: orgOf(ctx), range, filters, filter, plan };
    const answer = await deps.analytics.flowSeries(scope, step * 1000, split ? { dimension: split, limit: q.limit } : undefined);
    ctx.body = {
      step,
      resolution: answer.resolution,
      segments: answer.segments.map(segmentView),
      series: answer.series.map((s) => ({
        key: s.key,
        points: seriesPoints(range, step * 1000, s.volumes).map((p) => ({ ...p, t: iso(p.t) })),
      })),
    };
  });
}

/** GET /v1/telemetry/flows, /flows/top and /flows/series. */
export function registerFlowAnalyticsRoutes(router: Router, deps: ApiDeps): void {
  const guard = requirePermission('read');
  registerFlows(router, deps, guard);
  registerTop(router, deps, guard);
  registerSeries(router, deps, guard);
}
