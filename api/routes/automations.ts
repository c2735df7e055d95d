import type Router from '@koa/router';
import type { Context } from 'koa';
import { z } from 'zod';
import { iso } from '../../core/time';
import { automationPayload } from '../../core/webhook-events';
import { automationStatuses } from '../../core/automation-plan';
import type { ActiveMitigation } from '../../application/automation-service';
import { orgOf, principalOf, requirePermission, requirePlatformAdmin } from '../auth';
import { readOptionalJson } from '../body';
import type { ApiDeps } from '../deps';
import { decodeCursor, limitSchema, pageOf } from '../pagination';
import { knownIdForm, parseOrThrow, pathParam, refuseQuery, singleQuery } from '../validation';

export const listSchema = z
  .object({
    status: z.enum(automationStatuses).optional(),
    incident_id: z.string().max(64).optional(),
    limit: limitSchema,
    cursor: z.string().max(512).optional(),
  })
  .strict();
export const decisionSchema = z.object({ comment: z.string().max(1000).optional() }).strict();
/** An extension is at most a week at a time; the policies bound the whole duration. */
export const extendSchema = z.object({ minutes: z.number().int().min(1).max(10_080), comment: z.string().max(1000).optional() }).strict();
const cursorSchema = z.object({ requested_at: z.number().int(), automation_id: z.string().max(64) });
const automationId = (ctx: Context) => knownIdForm('aut', pathParam(ctx, 'id'), 'automation');

/** A workspace sees its own mitigations without its org id; the platform admin sees whose each is. */
export const mitigationView = (m: ActiveMitigation) => ({
  automation_id: m.automation_id,
  incident_id: m.incident_id,
  id: m.id,
  type: m.type,
  destination: m.destination,
  starts_at: iso(m.starts_at),
  ends_at: iso(m.ends_at),
});
const adminMitigationView = (m: ActiveMitigation) => ({ org_id: m.org_id, ...mitigationView(m) });

/**
 * Automation runs (`read`), people's decisions on them and their changes
 * (`approve`), and the mitigations announced now (`read`).
 */
export function registerAutomationRoutes(router: Router, deps: ApiDeps): void {
  const read = requirePermission('read');
  const approve = requirePermission('approve');

  router.get('/v1/automations', read, async (ctx) => {
    const q = parseOrThrow(listSchema, singleQuery(ctx.query), 'query');
    const rows = await deps.automations.list(orgOf(ctx), { status: q.status, incidentId: q.incident_id, limit: q.limit + 1, after: decodeCursor(q.cursor, cursorSchema) });
    ctx.body = pageOf(rows, q.limit, (r) => ({ requested_at: r.requested_at, automation_id: r.automation_id }), automationPayload);
  });

  router.get('/v1/automations/:id', read, async (ctx) => {
    ctx.body = automationPayload(await deps.automations.get(orgOf(ctx), automationId(ctx)));
  });

  for (const decision of ['approve', 'deny'] as const) {
    router.post(`/v1/automations/:id/${decision}`, approve, async (ctx) => {
      const id = automationId(ctx);
      const input = parseOrThrow(decisionSchema, await readOptionalJson(ctx, deps.bodyLimitBytes), 'decision');
      await deps.automations.decide(orgOf(ctx), principalOf(ctx), id, decision, input.comment);
      ctx.status = 202;
      ctx.body = { automation_id: id, decision };
    });
  }

  router.post('/v1/automations/:id/withdraw', approve, async (ctx) => {
    const id = automationId(ctx);
    const input = parseOrThrow(decisionSchema, await readOptionalJson(ctx, deps.bodyLimitBytes), 'withdrawal');
    ctx.body = automationPayload(await deps.automations.withdraw(orgOf(ctx), principalOf(ctx), id, input.comment));
  });

  router.post('/v1/automations/:id/extend', approve, async (ctx) => {
    const id = automationId(ctx);
    const input = parseOrThrow(extendSchema, await readOptionalJson(ctx, deps.bodyLimitBytes), 'extension');
    ctx.body = automationPayload(await deps.automations.extend(orgOf(ctx), principalOf(ctx), id, input.minutes, input.comment));
  });

  router.get('/v1/mitigations', read, async (ctx) => {
    refuseQuery(ctx.query);
    ctx.body = { data: (await deps.automations.active(orgOf(ctx))).map(mitigationView) };
  });

  router.get('/v1/mitigations/all', requirePlatformAdmin(), async (ctx) => {
    refuseQuery(ctx.query);
    ctx.body = { data: (await deps.automations.active()).map(adminMitigationView) };
  });
}
