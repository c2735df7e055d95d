import type Router from '@koa/router';
import { z } from 'zod';
import { orgIdSchema, workspaceOrgIdSchema } from '../../core/ids';
import { isRole, roles } from '../../core/roles';
import { isoOrNull } from '../../core/time';
import { ownerOfKey, type KeyRecord } from '../../storage/keys-repo';
import { personSchema } from '../../core/person-schema';
import { principalOf, requirePermission } from '../auth';
import { readOptionalJson } from '../body';
import type { ApiDeps } from '../deps';
import { decodeCursor, limitSchema, pageOf } from '../pagination';
import { knownIdForm, parseOrThrow, pathParam, singleQuery } from '../validation';

/** `service`, or a person by subject; `service` and `key:…` name no person a caller may choose (ownerOfKey reads them). */
export const keyOwnerSchema = z.union([
  z.literal('service'),
  z
    .object({
      subject: personSchema.shape.subject.refine((s) => s !== 'service' && !s.startsWith('key:'), 'a subject is not "service" and does not start with "key:"'),
      name: personSchema.shape.name.optional(),
      email: personSchema.shape.email.optional(),
    })
    .strict(),
]);

export const mintSchema = z
  .object({
    org_id: workspaceOrgIdSchema.optional(),
    role: z.enum(roles).optional(),
    name: z.string().max(200).optional(),
    expires_in_seconds: z.number().int().min(1).max(10 * 365 * 86400).optional(),
    owner: keyOwnerSchema.optional(),
  })
  .strict();

export const listSchema = z
  .object({ org_id: orgIdSchema.optional(), limit: limitSchema, cursor: z.string().max(512).optional() })
  .strict();
const cursorSchema = z.object({ created_at: z.number().int(), key_id: z.string() });

/** A key as clients see it: never its secret, never its hash. */
function keyView(record: KeyRecord) {
  return {
    key_id: record.key_id,
    org_id: record.org_id,
    name: record.name,
    role: isRole(record.role) ? record.role : 'analyst',
    scope: 'tenant' as const,
    created_at: isoOrNull(record.created_at),
    expires_at: isoOrNull(record.expires_at),
    revoked_at: isoOrNull(record.revoked_at),
    status: record.revoked_at ? 'revoked' : record.expires_at && record.expires_at <= Date.now() ? 'expired' : 'active',
    owner: ownerOfKey(record),
  };
}

export function registerKeyRoutes(router: Router, deps: ApiDeps): void {
  const guard = requirePermission('keys:manage');

  router.post('/v1/api-keys', guard, async (ctx) => {
    const request = parseOrThrow(mintSchema, await readOptionalJson(ctx, deps.bodyLimitBytes), 'api key request');
    const minted = await deps.keys.mint(principalOf(ctx), {
      orgId: request.org_id,
      role: request.role,
      name: request.name,
      expiresInSeconds: request.expires_in_seconds,
      owner: request.owner,
    });
    ctx.status = 201;
    ctx.body = { key: minted.key, ...keyView(minted.record) };
  });

  router.get('/v1/api-keys', guard, async (ctx) => {
    const query = parseOrThrow(listSchema, singleQuery(ctx.query), 'query');
    const after = decodeCursor(query.cursor, cursorSchema);
    const rows = await deps.keys.list(principalOf(ctx), { orgId: query.org_id, limit: query.limit + 1, after });
    ctx.body = pageOf(rows, query.limit, (r) => ({ created_at: r.created_at, key_id: r.key_id }), keyView);
  });

  router.delete('/v1/api-keys/:id', guard, async (ctx) => {
    const keyId = knownIdForm('key', pathParam(ctx, 'id'), 'api key');
    const revoked = await deps.keys.revoke(principalOf(ctx), keyId);
    ctx.body = keyView(revoked);
  });
}
