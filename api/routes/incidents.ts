import type Router from '@koa/router';
import type { Context } from 'koa';
import { z } from 'zod';
import { labelSchema } from '../../core/telemetry';
import { iso } from '../../core/time';
import type { StoredIncident } from '../../storage/incidents-repo';
import { orgOf, principalOf, requirePermission } from '../auth';
import type { ApiDeps } from '../deps';
import { decodeCursor, limitSchema, pageOf } from '../pagination';
import { knownIdForm, parseOrThrow, pathParam, singleQuery, timeParam } from '../validation';

const listSchema = z
  .object({
    state: z.enum(['open', 'acknowledged', 'resolved']).optional(),
    severity: z.enum(['high', 'critical']).optional(),
    service: labelSchema.optional(),
    environment: labelSchema.optional(),
    since: timeParam.optional(),
    limit: limitSchema,
    cursor: z.string().max(512).optional(),
  })
  .strict();
const cursorSchema = z.object({ first_seen: z.number().int(), id: z.string().max(64) });

/** An incident as clients see it: `state` and `status` carry the same value. */
function incidentView(i: StoredIncident) {
  return {
    id: i.id,
    severity: i.severity,
    state: i.state,
    status: i.state,
    source: i.source,
    service: i.service,
    environment: i.environment,
    region: i.region,
    rule: i.rule,
    escalations: i.escalations,
    signal_count: i.signal_count,
    kinds: i.kinds,
    first_seen: iso(i.first_seen),
    last_seen: iso(i.last_seen),
    max_latency_ms: i.max_latency_ms,
    total_bytes: i.total_bytes,
    rules_version: i.rules_version,
    updated_at: iso(i.updated_at),
  };
}

const incidentId = (ctx: Context) => knownIdForm('inc', pathParam(ctx, 'id'), 'incident');

export function registerIncidentRoutes(router: Router, deps: ApiDeps): void {
  router.get('/v1/incidents', requirePermission('read'), async (ctx) => {
    const q = parseOrThrow(listSchema, singleQuery(ctx.query), 'query');
    const after = decodeCursor(q.cursor, cursorSchema);
    const rows = await deps.incidents.list(orgOf(ctx), q, q.limit + 1, after);
    ctx.body = pageOf(rows, q.limit, (i) => ({ first_seen: i.first_seen, id: i.id }), incidentView);
  });

  router.get('/v1/incidents/:id', requirePermission('read'), async (ctx) => {
    ctx.body = incidentView(await deps.incidents.get(orgOf(ctx), incidentId(ctx)));
  });

  for (const action of ['acknowledge', 'resolve'] as const) {
    router.post(`/v1/incidents/:id/${action}`, requirePermission('incidents:manage'), async (ctx) => {
      const id = incidentId(ctx);
      ctx.body = incidentView(await deps.incidents.transition(orgOf(ctx), principalOf(ctx).keyId, id, action));
    });
  }
}
