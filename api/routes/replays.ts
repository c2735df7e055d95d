import type Router from '@koa/router';
import type { Context } from 'koa';
import { z } from 'zod';
import { maxReplayWindowMinutes, replayStatuses } from '../../core/replay';
import { replayPayload } from '../../core/webhook-events';
import { orgOf, principalOf, requirePermission } from '../auth';
import { readBody, readOptionalJson } from '../body';
import type { ApiDeps } from '../deps';
import { decodeCursor, limitSchema, pageOf } from '../pagination';
import { knownIdForm, parseOrThrow, pathParam, singleQuery } from '../validation';

export const requestSchema = z
  .object({
    incident_id: z.string(),
    // The absolute bound; the service refuses what is over REPLAY_MAX_WINDOW_MINUTES (1 day by default).
    window_minutes: z.number().int().min(1).max(maxReplayWindowMinutes).optional(),
  })
  .strict();
export const decisionSchema = z.object({ comment: z.string().max(1000).optional() }).strict();
export const listSchema = z
  .object({
    status: z.enum(replayStatuses).optional(),
    incident_id: z.string().max(64).optional(),
    limit: limitSchema,
    cursor: z.string().max(512).optional(),
  })
  .strict();
const cursorSchema = z.object({ requested_at: z.number().int(), replay_id: z.string().max(64) });
const replayId = (ctx: Context) => knownIdForm('rep', pathParam(ctx, 'id'), 'replay');

export function registerReplayRoutes(router: Router, deps: ApiDeps): void {
  const read = requirePermission('read');
  const approve = requirePermission('approve');

  router.post('/v1/replay', requirePermission('replays:run'), async (ctx) => {
    const body = await readBody(ctx, { limitBytes: deps.bodyLimitBytes, accept: ['json'] });
    const input = parseOrThrow(requestSchema, body!.value, 'replay request');
    const incidentId = knownIdForm('inc', input.incident_id, 'incident');
    const record = await deps.replays.request(orgOf(ctx), principalOf(ctx), incidentId, input.window_minutes);
    ctx.status = 202;
    ctx.body = { replay_id: record.replay_id, status: record.status, incident_id: record.incident_id };
  });

  const list = (forcedStatus?: 'awaiting_approval') => async (ctx: Context) => {
    const q = parseOrThrow(listSchema, singleQuery(ctx.query), 'query');
    const rows = await deps.replays.list(orgOf(ctx), {
      status: forcedStatus ?? q.status,
      incidentId: q.incident_id,
      limit: q.limit + 1,
      after: decodeCursor(q.cursor, cursorSchema),
    });
    ctx.body = pageOf(rows, q.limit, (r) => ({ requested_at: r.requested_at, replay_id: r.replay_id }), replayPayload);
  };
  router.get('/v1/replays', read, list());
  router.get('/v1/approvals', read, list('awaiting_approval'));

  router.get('/v1/replays/:id', read, async (ctx) => {
    ctx.body = replayPayload(await deps.replays.get(orgOf(ctx), replayId(ctx)));
  });

  for (const decision of ['approve', 'deny'] as const) {
    router.post(`/v1/replays/:id/${decision}`, approve, async (ctx) => {
      const id = replayId(ctx);
      const input = parseOrThrow(decisionSchema, await readOptionalJson(ctx, deps.bodyLimitBytes), 'decision');
      await deps.replays.decide(orgOf(ctx), principalOf(ctx), id, decision, input.comment);
      ctx.status = 202;
      ctx.body = { replay_id: id, decision };
    });
  }
}
