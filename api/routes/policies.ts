import type Router from '@koa/router';
import type { Context } from 'koa';
import { z } from 'zod';
import { conflict, notFound } from '../../core/errors';
import { randomId } from '../../core/ids';
import { defaultApprovalTimeoutMinutes, type Policy } from '../../core/policy';
import { orgOf, principalOf, requirePermission } from '../auth';
import { readBody } from '../body';
import type { ApiDeps } from '../deps';
import { decodeCursor, limitSchema, pageOf } from '../pagination';
import { parseOrThrow, singleQuery } from '../validation';

const label = z.string().trim().min(1).max(128);
const boundaries = {
  environments: z.array(label).max(100).optional(),
  severities: z.array(z.enum(['high', 'critical'])).max(2).optional(),
  allow_execution: z.boolean().optional(),
  // null removes the limit.
  max_window_minutes: z.number().int().min(1).max(525_600).nullable().optional(),
  // Fractions are allowed (0.5 is thirty seconds); at most a week.
  approval_timeout_minutes: z.number().positive().max(10_080).optional(),
};
const createSchema = z.object({ name: z.string().trim().min(1).max(200), requires_approval: z.boolean(), ...boundaries }).strict();
const patchSchema = z
  .object({ name: z.string().trim().min(1).max(200).optional(), requires_approval: z.boolean().optional(), ...boundaries })
  .strict()
  .refine((p) => Object.keys(p).length > 0, 'nothing to change');
const listSchema = z
  .object({ status: z.enum(['active', 'inactive']).optional(), limit: limitSchema, cursor: z.string().max(512).optional() })
  .strict();
const cursorSchema = z.object({ created_at: z.number().int(), id: z.string().max(64) });
const idSchema = z.string().regex(/^pol_[0-9a-f]{20}$/, 'not a policy id');

export function policyView(p: Policy) {
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
    created_at: new Date(p.created_at).toISOString(),
    updated_at: new Date(p.updated_at).toISOString(),
    version: p.version,
  };
}

export function registerPolicyRoutes(router: Router, deps: ApiDeps): void {
  const manage = requirePermission('policies:manage');
  const read = requirePermission('read');
  const body = async (ctx: Context) =>
    (await readBody(ctx, { limitBytes: deps.bodyLimitBytes, accept: ['json'] }))!.value;

  router.post('/v1/policies', manage, async (ctx) => {
    const input = parseOrThrow(createSchema, await body(ctx), 'policy');
    const orgId = orgOf(ctx);
    const now = Date.now();
    const policy: Policy = {
      id: randomId('pol'),
      org_id: orgId,
      name: input.name,
      requires_approval: input.requires_approval,
      allow_execution: input.allow_execution ?? true,
      environments: input.environments ?? [],
      severities: input.severities ?? [],
      max_window_minutes: input.max_window_minutes ?? 0,
      approval_timeout_minutes: input.approval_timeout_minutes ?? defaultApprovalTimeoutMinutes,
      status: 'active',
      created_at: now,
      updated_at: now,
      version: 1,
    };
    await deps.policies.put(policy);
    await deps.audit.append({ orgId, actor: principalOf(ctx).keyId, action: 'policy.create', target: policy.id, details: input });
    ctx.status = 201;
    ctx.body = policyView(policy);
  });

  router.get('/v1/policies', read, async (ctx) => {
    const q = parseOrThrow(listSchema, singleQuery(ctx.query), 'query');
    const rows = await deps.policies.list(orgOf(ctx), { status: q.status, limit: q.limit + 1, after: decodeCursor(q.cursor, cursorSchema) });
    ctx.body = pageOf(rows, q.limit, (p) => ({ created_at: p.created_at, id: p.id }), policyView);
  });

  router.get('/v1/policies/:id', read, async (ctx) => {
    const policy = await deps.policies.get(orgOf(ctx), parseOrThrow(idSchema, ctx.params.id, 'policy id'));
    if (!policy) throw notFound('policy');
    ctx.body = policyView(policy);
  });

  router.patch('/v1/policies/:id', manage, async (ctx) => {
    const id = parseOrThrow(idSchema, ctx.params.id, 'policy id');
    const changes = parseOrThrow(patchSchema, await body(ctx), 'policy change');
    const orgId = orgOf(ctx);
    const policy = await deps.policies.get(orgId, id);
    if (!policy) throw notFound('policy');
    if (policy.status === 'inactive') throw conflict('an inactive policy cannot be changed');
    const updated: Policy = {
      ...policy,
      ...changes,
      max_window_minutes: changes.max_window_minutes === undefined ? policy.max_window_minutes : (changes.max_window_minutes ?? 0),
      updated_at: Date.now(),
      version: policy.version + 1,
    } as Policy;
    await deps.policies.put(updated);
    await deps.audit.append({ orgId, actor: principalOf(ctx).keyId, action: 'policy.update', target: id, details: changes });
    ctx.body = policyView(updated);
  });

  router.delete('/v1/policies/:id', manage, async (ctx) => {
    const id = parseOrThrow(idSchema, ctx.params.id, 'policy id');
    const orgId = orgOf(ctx);
    const policy = await deps.policies.get(orgId, id);
    if (!policy) throw notFound('policy');
    if (policy.status === 'inactive') throw conflict('the policy is already inactive');
    const inactive: Policy = { ...policy, status: 'inactive', updated_at: Date.now(), version: policy.version + 1 };
    await deps.policies.put(inactive);
    await deps.audit.append({ orgId, actor: principalOf(ctx).keyId, action: 'policy.deactivate', target: id });
    ctx.body = policyView(inactive);
  });
}
