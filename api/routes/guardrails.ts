import type Router from '@koa/router';
import type { Context } from 'koa';
import { z } from 'zod';
import { isoOrNull } from '../../core/time';
import { isHeld, type HeldChange } from '../../application/guardrails/guardrail-service';
import type { GuardrailChange, GuardrailSettings } from '../../storage/guardrails-repo';
import { orgOf, principalOf, requirePermission } from '../auth';
import { readBody } from '../body';
import type { ApiDeps } from '../deps';
import { limitSchema } from '../pagination';
import { knownIdForm, parseOrThrow, pathParam, refuseQuery, singleQuery } from '../validation';

export function guardrailChangeView(c: GuardrailChange) {
  return {
    change_id: c.change_id,
    kind: c.kind,
    target: c.target,
    change: c.change,
    reasons: c.reasons,
    status: c.status,
    requested_by: c.requested_by,
    requested_by_person: c.requested_by_person,
    requested_at: isoOrNull(c.requested_at),
    decided_by: c.decided_by || null,
    decided_by_person: c.decided_by ? c.decided_by_person : null,
    decided_at: isoOrNull(c.decided_at),
  };
}

/**
 * The answer to a change that may loosen a guardrail: 202 with the change
 * held for a second person, or what `view` makes of the change applied.
 */
export function answerGuarded<T>(ctx: Context, result: T | HeldChange, view: (applied: T) => unknown): void {
  if (isHeld(result)) {
    ctx.status = 202;
    ctx.body = guardrailChangeView(result.held);
    return;
  }
  ctx.body = view(result);
}

export const settingsPutSchema = z.object({ four_eyes: z.boolean() }).strict();
export const changesListSchema = z.object({ status: z.enum(['awaiting_approval', 'approved', 'denied']).optional(), limit: limitSchema }).strict();

const settingsView = (s: GuardrailSettings, ungated: boolean) => ({
  four_eyes: s.four_eyes,
  ungated,
  version: s.version,
  updated_at: isoOrNull(s.updated_at),
  updated_by: s.actor || null,
});

/**
 * A workspace's guardrails with two pairs of eyes: the setting (read by
 * anyone who reads; set with `policies:manage`, turning it off waits for a
 * second person), and the changes held for one, decided with `approve`.
 */
export function registerGuardrailRoutes(router: Router, deps: ApiDeps): void {
  const read = requirePermission('read');
  const approve = requirePermission('approve');
  const changeId = (ctx: Context) => knownIdForm('grc', pathParam(ctx, 'id'), 'guardrail change');

  router.get('/v1/guardrails', read, async (ctx) => {
    refuseQuery(ctx.query);
    const orgId = orgOf(ctx);
    const [settings, ungated] = await Promise.all([deps.guardrails.settings(orgId), deps.guardrails.isUngated(orgId)]);
    ctx.body = settingsView(settings, ungated);
  });

  router.put('/v1/guardrails', requirePermission('policies:manage'), async (ctx) => {
    const body = (await readBody(ctx, { limitBytes: deps.bodyLimitBytes, accept: ['json'] }))!.value;
    const { four_eyes } = parseOrThrow(settingsPutSchema, body, 'guardrail settings');
    const orgId = orgOf(ctx);
    const result = await deps.guardrails.setFourEyes(orgId, principalOf(ctx).keyId, four_eyes);
    const ungated = await deps.guardrails.isUngated(orgId);
    answerGuarded(ctx, result, (s) => settingsView(s, ungated));
  });

  router.get('/v1/guardrail-changes', read, async (ctx) => {
    const q = parseOrThrow(changesListSchema, singleQuery(ctx.query), 'query');
    ctx.body = { data: (await deps.guardrails.list(orgOf(ctx), { status: q.status, limit: q.limit })).map(guardrailChangeView) };
  });

  router.get('/v1/guardrail-changes/:id', read, async (ctx) => {
    refuseQuery(ctx.query);
    ctx.body = guardrailChangeView(await deps.guardrails.get(orgOf(ctx), changeId(ctx)));
  });

  for (const decision of ['approve', 'deny'] as const) {
    router.post(`/v1/guardrail-changes/:id/${decision}`, approve, async (ctx) => {
      refuseQuery(ctx.query);
      ctx.body = guardrailChangeView(await deps.guardrails.decide(orgOf(ctx), principalOf(ctx), changeId(ctx), decision));
    });
  }
}
