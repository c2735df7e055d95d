import type Router from '@koa/router';
import { z } from 'zod';
import { conflict, notFound } from '../../core/errors';
import type { StoredIncident } from '../../storage/incidents-repo';
import { orgOf, principalOf, requirePermission } from '../auth';
import type { ApiDeps } from '../deps';
import { decodeCursor, limitSchema, pageOf } from '../pagination';
import { iso, parseOrThrow, singleQuery, timeParam } from '../validation';


const listSchema = z
  .object({
    state: z.enum(['open', 'acknowledged', 'resolved']).optional(),
    severity: z.enum(['high', 'critical']).optional(),
    service: z.string().min(1).max(128).optional(),
    environment: z.string().min(1).max(128).optional(),
    since: timeParam.optional(),
    limit: limitSchema,
    cursor: z.string().max(512).optional(),
  })
  .strict();
const cursorSchema = z.object({ first_seen: z.number().int(), id: z.string().max(64) });
const idSchema = z.string().regex(/^inc_[0-9a-f]{20}$/, 'not an incident id');

/** An incident as clients see it: `state` and `status` carry the same value. */
export function incidentView(i: StoredIncident) {
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
    updated_at: iso(i.updated_at),
  };
}

export function registerIncidentRoutes(router: Router, deps: ApiDeps): void {
  router.get('/v1/incidents', requirePermission('read'), async (ctx) => {
    const q = parseOrThrow(listSchema, singleQuery(ctx.query), 'query');
    const after = decodeCursor(q.cursor, cursorSchema);
    const rows = await deps.incidents.list(orgOf(ctx), q, q.limit + 1, after);
    ctx.body = pageOf(rows, q.limit, (i) => ({ first_seen: i.first_seen, id: i.id }), incidentView);
  });

  router.get('/v1/incidents/:id', requirePermission('read'), async (ctx) => {
    const id = parseOrThrow(idSchema, ctx.params.id, 'incident id');
    const incident = await deps.incidents.get(orgOf(ctx), id);
    if (!incident) throw notFound('incident');
    ctx.body = incidentView(incident);
  });

  for (const action of ['acknowledge', 'resolve'] as const) {
    router.post(`/v1/incidents/:id/${action}`, requirePermission('incidents:manage'), async (ctx) => {
      const id = parseOrThrow(idSchema, ctx.params.id, 'incident id');
      const orgId = orgOf(ctx);
      const incident = await deps.incidents.get(orgId, id);
      if (!incident) throw notFound('incident');
      const state = action === 'acknowledge' ? 'acknowledged' : 'resolved';
      if (incident.state === 'resolved') throw conflict('the incident is already resolved');
      if (incident.state === state) throw conflict(`the incident is already ${state}`);
      const actor = principalOf(ctx).keyId;
      const transition = {
        incident_id: id,
        org_id: orgId,
        service: incident.service,
        environment: incident.environment,
        region: incident.region,
        state,
        at: Date.now(),
        through_ts: incident.last_seen,
      } as const;
      await deps.incidents.addTransition(orgId, transition, actor);
      await deps.correlator.recompute(orgId, [{ ...incident, since: incident.first_seen }]);
      await deps.audit.append({ orgId, actor, action: `incident.${action}`, target: id, details: { from: incident.state, to: state } });
      const updated = await deps.incidents.get(orgId, id);
      ctx.body = incidentView(updated ?? incident);
    });
  }
}
