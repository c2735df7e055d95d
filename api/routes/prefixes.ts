import type Router from '@koa/router';
import type { Context } from 'koa';
import { z } from 'zod';
import type { PendingPrefix } from '../../application/prefix-service';
import { canonicalPrefix, prefixStatuses, type WorkspacePrefix } from '../../core/workspace-prefix';
import { iso } from '../../core/time';
import { orgOf, principalOf, requirePermission, requirePlatformAdmin } from '../auth';
import { readBody } from '../body';
import type { ApiDeps } from '../deps';
import { decodeCursor, limitSchema, pageOf } from '../pagination';
import { knownIdForm, parseOrThrow, pathParam, singleQuery } from '../validation';

/** A prefix as declared: refused here with canonicalPrefix's reason (a host bit set, too wide), so the 400 names the field. */
const prefix = z
  .string()
  .max(64)
  .superRefine((text, ctx) => {
    const canonical = canonicalPrefix(text);
    if ('error' in canonical) ctx.addIssue({ code: 'custom', message: canonical.error });
  })
  .meta({ description: 'CIDR, the network address: IPv4 /8 to /32, IPv6 /16 to /128', example: '198.51.100.0/24' });
export const declareSchema = z.object({ prefix, description: z.string().trim().max(200).optional() }).strict();
export const listSchema = z
  .object({ status: z.enum(prefixStatuses).optional(), limit: limitSchema, cursor: z.string().max(512).optional() })
  .strict();
export const pendingSchema = z.object({ limit: limitSchema, cursor: z.string().max(512).optional() }).strict();
const cursorSchema = z.object({ created_at: z.number().int(), id: z.string().max(64) });

function prefixView(p: WorkspacePrefix) {
  return {
    id: p.id,
    prefix: p.prefix,
    description: p.description,
    status: p.status,
    created_at: iso(p.created_at),
    created_by: p.created_by,
    updated_at: iso(p.updated_at),
    version: p.version,
  };
}

/** The platform admin's view: whose prefix it is too. */
const adminView = (p: WorkspacePrefix) => ({ org_id: p.org_id, ...prefixView(p) });

function pendingView(p: PendingPrefix) {
  const other = p.overlapsApproved;
  return { ...adminView(p), overlaps_approved: other ? { org_id: other.org_id, prefix_id: other.id, prefix: other.prefix } : null };
}

const prefixId = (ctx: Context) => knownIdForm('pfx', pathParam(ctx, 'id'), 'prefix');
const position = (p: WorkspacePrefix) => ({ created_at: p.created_at, id: p.id });

export function registerPrefixRoutes(router: Router, deps: ApiDeps): void {
  const manage = requirePermission('prefixes:manage');
  const read = requirePermission('read');
  const body = async (ctx: Context) => (await readBody(ctx, { limitBytes: deps.bodyLimitBytes, accept: ['json'] }))!.value;

  router.post('/v1/prefixes', manage, async (ctx) => {
    const input = parseOrThrow(declareSchema, await body(ctx), 'prefix declaration');
    ctx.status = 201;
    ctx.body = prefixView(await deps.prefixes.declare(orgOf(ctx), principalOf(ctx).keyId, input));
  });

  router.get('/v1/prefixes', read, async (ctx) => {
    const q = parseOrThrow(listSchema, singleQuery(ctx.query), 'query');
    const rows = await deps.prefixes.list(orgOf(ctx), { status: q.status, limit: q.limit + 1, after: decodeCursor(q.cursor, cursorSchema) });
    ctx.body = pageOf(rows, q.limit, position, prefixView);
  });

  // Before /:id, so that "pending" is not taken for an id.
  router.get('/v1/prefixes/pending', requirePlatformAdmin(), async (ctx) => {
    const q = parseOrThrow(pendingSchema, singleQuery(ctx.query), 'query');
    const rows = await deps.prefixes.pending({ limit: q.limit + 1, after: decodeCursor(q.cursor, cursorSchema) });
    ctx.body = pageOf(rows, q.limit, position, pendingView);
  });

  router.post('/v1/prefixes/:id/approve', requirePlatformAdmin(), async (ctx) => {
    ctx.body = adminView(await deps.prefixes.approve(principalOf(ctx).keyId, prefixId(ctx)));
  });

  router.post('/v1/prefixes/:id/reject', requirePlatformAdmin(), async (ctx) => {
    ctx.body = adminView(await deps.prefixes.reject(principalOf(ctx).keyId, prefixId(ctx)));
  });

  // Its own route, not a third decision: it acts on an approved prefix, where approve and reject act on pending ones.
  router.post('/v1/prefixes/:id/revoke', requirePlatformAdmin(), async (ctx) => {
    ctx.body = adminView(await deps.prefixes.revoke(principalOf(ctx).keyId, prefixId(ctx)));
  });

  router.get('/v1/prefixes/:id', read, async (ctx) => {
    ctx.body = prefixView(await deps.prefixes.get(orgOf(ctx), prefixId(ctx)));
  });

  router.delete('/v1/prefixes/:id', manage, async (ctx) => {
    ctx.body = prefixView(await deps.prefixes.remove(orgOf(ctx), principalOf(ctx).keyId, prefixId(ctx)));
  });
}
