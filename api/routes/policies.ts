import type Router from '@koa/router';
import type { Context } from 'koa';
import { z } from 'zod';
import { mitigationActions, type StoredPolicy } from '../../core/mitigation-policy';
import { iso } from '../../core/time';
import { orgOf, principalOf, requirePermission } from '../auth';
import { readBody } from '../body';
import type { ApiDeps } from '../deps';
import { answerGuarded } from './guardrails';
import { decodeCursor, limitSchema, pageOf } from '../pagination';
import { knownIdForm, parseOrThrow, pathParam, singleQuery } from '../validation';

const label = z.string().trim().min(1).max(128);
const boundaries = {
  environments: z.array(label).max(100).optional(),
  severities: z.array(z.enum(['high', 'critical'])).max(2).optional(),
  allow_execution: z.boolean().optional(),
  // null removes the limit.
  max_window_minutes: z.number().int().min(1).max(525_600).nullable().optional(),
  // Fractions are allowed (0.5 is thirty seconds); at most a week.
  approval_timeout_minutes: z.number().positive().max(10_080).optional(),
  // The mitigation bounds (core/mitigation-policy.ts): [] or 0 bound nothing; null removes a limit.
  allowed_actions: z
    .array(z.enum(mitigationActions))
    .refine((actions) => new Set(actions).size === actions.length, 'an action is given twice')
    .optional(),
  max_duration_minutes: z.number().int().min(1).max(10_080).nullable().optional(),
  max_active_mitigations: z.number().int().min(1).max(10_000).nullable().optional(),
  min_prefix_length_v4: z.number().int().min(0).max(32).optional(),
  min_prefix_length_v6: z.number().int().min(0).max(128).optional(),
};
export const createSchema = z.object({ name: z.string().trim().min(1).max(200), requires_approval: z.boolean(), ...boundaries }).strict();
export const patchSchema = z
  .object({ name: z.string().trim().min(1).max(200).optional(), requires_approval: z.boolean().optional(), ...boundaries })
  .strict()
  .refine((p) => Object.keys(p).length > 0, 'nothing to change');
export const listSchema = z
  .object({ status: z.enum(['active', 'inactive']).optional(), limit: limitSchema, cursor: z.string().max(512).optional() })
  .strict();
const cursorSchema = z.object({ created_at: z.number().int(), id: z.string().max(64) });

function policyView(p: StoredPolicy) {
  return {
    policy_id: p.id,
    id: p.id,
    name: p.name,
    status: p.status,
    requires_approval: p.requires_approval,
    allow_execution: p.allow_execution,
    environments: p.environments,
    severities: p.severities,
    max_window_minutes: p.max_window_minutes || null,
    approval_timeout_minutes: p.approval_timeout_minutes,
    allowed_actions: p.allowed_actions,
    max_duration_minutes: p.max_duration_minutes,
    max_active_mitigations: p.max_active_mitigations,
    min_prefix_length_v4: p.min_prefix_length_v4,
    min_prefix_length_v6: p.min_prefix_length_v6,
    created_at: iso(p.created_at),
    updated_at: iso(p.updated_at),
    version: p.version,
  };
}

const policyId = (ctx: Context) => knownIdForm('pol', pathParam(ctx, 'id'), 'policy');

export function registerPolicyRoutes(router: Router, deps: ApiDeps): void {
  const manage = requirePermission('policies:manage');
  const read = requirePermission('read');
  const body = async (ctx: Context) => (await readBody(ctx, { limitBytes: deps.bodyLimitBytes, accept: ['json'] }))!.value;

  router.post('/v1/policies', manage, async (ctx) => {
    const input = parseOrThrow(createSchema, await body(ctx), 'policy');
    ctx.status = 201;
    ctx.body = policyView(await deps.policies.create(orgOf(ctx), principalOf(ctx).keyId, input));
  });

  router.get('/v1/policies', read, async (ctx) => {
    const q = parseOrThrow(listSchema, singleQuery(ctx.query), 'query');
    const rows = await deps.policies.list(orgOf(ctx), { status: q.status, limit: q.limit + 1, after: decodeCursor(q.cursor, cursorSchema) });
    ctx.body = pageOf(rows, q.limit, (p) => ({ created_at: p.created_at, id: p.id }), policyView);
  });

  router.get('/v1/policies/:id', read, async (ctx) => {
    ctx.body = policyView(await deps.policies.get(orgOf(ctx), policyId(ctx)));
  });

  router.patch('/v1/policies/:id', manage, async (ctx) => {
    const id = policyId(ctx);
    const change = parseOrThrow(patchSchema, await body(ctx), 'policy change');
    answerGuarded(ctx, await deps.policies.update(orgOf(ctx), principalOf(ctx).keyId, id, change), policyView);
  });

  router.delete('/v1/policies/:id', manage, async (ctx) => {
    answerGuarded(ctx, await deps.policies.deactivate(orgOf(ctx), principalOf(ctx).keyId, policyId(ctx)), policyView);
  });
}
