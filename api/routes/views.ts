import type Router from '@koa/router';
import type { Context } from 'koa';
import { z } from 'zod';
import { viewInputSchema, type StoredView } from '../../core/saved-views';
import { iso } from '../../core/time';
import { orgOf, principalOf, requirePermission } from '../auth';
import { readBody } from '../body';
import type { ApiDeps } from '../deps';
import { knownIdForm, parseOrThrow, pathParam, refuseQuery } from '../validation';

/**
 * The workspace's saved views of the visualize page (issue 34): every key
 * and person of the workspace with `read` lists and opens them, `views:manage`
 * (admin, operator, analyst) creates, changes and deletes them. A change
 * names the `version` it edited (a stale one is 409).
 */
export const viewView = (v: StoredView) => ({
  id: v.id, name: v.name, state: v.state, version: v.version,
  created_at: iso(v.created_at), updated_at: iso(v.updated_at), created_by: v.created_by,
});

export const updateSchema = viewInputSchema.extend({ version: z.number().int().min(1).max(Number.MAX_SAFE_INTEGER).optional() }).strict();

const viewId = (ctx: Context) => knownIdForm('vw', pathParam(ctx, 'id'), 'view');

async function jsonBody(ctx: Context, deps: ApiDeps): Promise<unknown> {
  return (await readBody(ctx, { limitBytes: deps.bodyLimitBytes, accept: ['json'] }))!.value;
}

export function registerViewRoutes(router: Router, deps: ApiDeps): void {
  const read = requirePermission('read');
  const manage = requirePermission('views:manage');

  router.get('/v1/views', read, async (ctx) => {
    refuseQuery(ctx.query);
    ctx.body = { data: (await deps.views.list(orgOf(ctx))).map(viewView) };
  });

  router.post('/v1/views', manage, async (ctx) => {
    const input = parseOrThrow(viewInputSchema, await jsonBody(ctx, deps), 'view');
    ctx.body = viewView(await deps.views.create(orgOf(ctx), principalOf(ctx).keyId, input));
    ctx.status = 201;
  });

  router.get('/v1/views/:id', read, async (ctx) => {
    refuseQuery(ctx.query);
    ctx.body = viewView(await deps.views.get(orgOf(ctx), viewId(ctx)));
  });

  router.put('/v1/views/:id', manage, async (ctx) => {
    const id = viewId(ctx);
    const { version, ...input } = parseOrThrow(updateSchema, await jsonBody(ctx, deps), 'view');
    ctx.body = viewView(await deps.views.update(orgOf(ctx), principalOf(ctx).keyId, id, input, version));
  });

  router.delete('/v1/views/:id', manage, async (ctx) => {
    ctx.body = viewView(await deps.views.delete(orgOf(ctx), principalOf(ctx).keyId, viewId(ctx)));
  });
}
