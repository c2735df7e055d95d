import { incidentPayload } from '../../core/webhook-events';
import type Router from '@koa/router';
import type { Context } from 'koa';
import { z } from 'zod';
import type { IncidentAttack } from '../../core/detection/incident-attack';
import { labelSchema, type SignalRow } from '../../core/telemetry';
import { iso } from '../../core/time';
import type { StoredIncident } from '../../storage/incidents-repo';
import { orgOf, principalOf, requirePermission } from '../auth';
import type { ApiDeps } from '../deps';
import { decodeCursor, limitSchema, pageOf } from '../pagination';
import { knownIdForm, parseOrThrow, pathParam, singleQuery, timeParam } from '../validation';

export const listSchema = z
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

export const signalsSchema = z.object({ limit: limitSchema, cursor: z.string().max(512).optional() }).strict();
const signalCursorSchema = z.object({ ts: z.number().int(), event_id: z.string().max(128) });

/** A signal on an incident's timeline: absent optional fields read null, not 0 or "". */
function signalView(s: SignalRow) {
  return {
    event_id: s.event_id,
    telemetry: s.telemetry,
    timestamp: iso(s.ts),
    received_at: iso(s.received_at),
    rule: s.rule || null,
    asn: s.asn || null,
    src_ip: s.src_ip || null,
    dst_ip: s.dst_ip || null,
    dst_port: s.dst_port || null,
    bytes: s.bytes,
    latency_ms: s.latency_ms,
  };
}

/** An incident as clients see it: the view events carry too, and when it last changed. */
function incidentView(i: StoredIncident) {
  return { ...incidentPayload(i), updated_at: iso(i.updated_at) };
}

/** One incident with the attack a rate detector saw on its target (null for an incident of another detector). */
function attackView(a: IncidentAttack | undefined) {
  if (!a) return null;
  const { details, peak_window_end, ...rest } = a;
  return { ...rest, peak_window_end: iso(peak_window_end), ...details };
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
    const incident = await deps.incidents.get(orgOf(ctx), incidentId(ctx));
    ctx.body = { ...incidentView(incident), attack: attackView(await deps.incidents.attack(orgOf(ctx), incident)) };
  });

  router.get('/v1/incidents/:id/signals', requirePermission('read'), async (ctx) => {
    const id = incidentId(ctx);
    const q = parseOrThrow(signalsSchema, singleQuery(ctx.query), 'query');
    const rows = await deps.incidents.signals(orgOf(ctx), id, q.limit + 1, decodeCursor(q.cursor, signalCursorSchema));
    ctx.body = pageOf(rows, q.limit, (s) => ({ ts: s.ts, event_id: s.event_id }), signalView);
  });

  for (const action of ['acknowledge', 'resolve'] as const) {
    router.post(`/v1/incidents/:id/${action}`, requirePermission('incidents:manage'), async (ctx) => {
      const id = incidentId(ctx);
      ctx.body = incidentView(await deps.incidents.transition(orgOf(ctx), principalOf(ctx).keyId, id, action));
    });
  }
}
