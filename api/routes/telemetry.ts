import type Router from '@koa/router';
import { z } from 'zod';
import { validationError } from '../../core/errors';
import { orgOf, requirePermission } from '../auth';
import type { ApiDeps } from '../deps';
import { decodeCursor, encodeCursor } from '../pagination';
import { ip, labelSchema, protocolSchema } from '../../core/telemetry';
import { iso } from '../../core/time';
import { parseOrThrow, singleQuery, timeParam } from '../validation';

/**
 * Analysts' reads. Every query is bounded: a time range (default the last
 * hour; at most 7 days for raw flows, 31 days for rollups) and a row limit.
 * Rollup reads say which resolution answered them.
 */
const hour = 3_600_000;
const day = 24 * hour;
const rangeFields = { from: timeParam.optional(), to: timeParam.optional() };

function rangeOf(q: { from?: number; to?: number }, maxMs: number) {
  const to = q.to ?? Date.now();
  const from = q.from ?? to - hour;
  if (from >= to) throw validationError('from must be before to', [{ path: 'from', message: 'must be before to' }]);
  if (to - from > maxMs) {
    throw validationError(`the time range is at most ${maxMs / day} days`, [{ path: 'from', message: 'range too long' }]);
  }
  return { from, to };
}

const flowsSchema = z
  .object({
    ...rangeFields,
    src_ip: ip.optional(),
    dst_ip: ip.optional(),
    protocol: protocolSchema.optional(),
    limit: z.coerce.number().int().min(1).max(1000).default(100),
    cursor: z.string().max(512).optional(),
  })
  .strict();
const topSchema = z
  .object({
    ...rangeFields,
    by: z.enum(['src_ip', 'dst_ip', 'protocol']).default('dst_ip'),
    metric: z.enum(['bytes', 'packets']).default('bytes'),
    limit: z.coerce.number().int().min(1).max(1000).default(10),
  })
  .strict();
const seriesSchema = z
  .object({
    ...rangeFields,
    service: labelSchema,
    metric: z.string().trim().min(1).max(128),
    step: z.coerce.number().int().min(60).max(86_400).default(60).refine((s) => s % 60 === 0, 'step is a whole number of minutes, in seconds'),
  })
  .strict();
const flowCursor = z.object({ ts: z.number().int(), event_id: z.string().max(64) });

export function registerTelemetryRoutes(router: Router, deps: ApiDeps): void {
  const guard = requirePermission('read');

  router.get('/v1/telemetry/flows', guard, async (ctx) => {
    const q = parseOrThrow(flowsSchema, singleQuery(ctx.query), 'query');
    const range = rangeOf(q, 7 * day);
    const after = decodeCursor(q.cursor, flowCursor);
    const rows = await deps.analytics.flows(orgOf(ctx), { ...q, ...range }, q.limit + 1, after);
    const page = rows.slice(0, q.limit);
    const last = page[page.length - 1];
    ctx.body = {
      data: page.map((r) => ({ ...r, ts: iso(r.ts) })),
      next_cursor: rows.length > q.limit && last ? encodeCursor({ ts: last.ts, event_id: last.event_id }) : null,
    };
  });

  router.get('/v1/telemetry/flows/top', guard, async (ctx) => {
    const q = parseOrThrow(topSchema, singleQuery(ctx.query), 'query');
    const range = rangeOf(q, 31 * day);
    const top = await deps.analytics.topTalkers(orgOf(ctx), q.by, q.metric, range, q.limit);
    ctx.body = {
      data: top.data,
      resolution: top.resolution,
      segments: top.segments.map((s) => ({ from: iso(s.from), to: iso(s.to), resolution: s.resolution })),
    };
  });

  router.get('/v1/telemetry/metrics/series', guard, async (ctx) => {
    const q = parseOrThrow(seriesSchema, singleQuery(ctx.query), 'query');
    const range = rangeOf(q, 31 * day);
    if ((range.to - range.from) / (q.step * 1000) > 10_000) {
      throw validationError('at most 10,000 points: widen the step or narrow the range', [{ path: 'step', message: 'too many points' }]);
    }
    const series = await deps.analytics.metricSeries(orgOf(ctx), q.service, q.metric, q.step * 1000, range);
    ctx.body = { data: series.data, resolution: series.resolution };
  });
}
