import type Router from '@koa/router';
import { z } from 'zod';
import { groupMappingsSchema, type VersionedGroupMappings } from '../../core/group-mappings';
import { orgIdSchema } from '../../core/ids';
import { isoOrNull } from '../../core/time';
import type { SsoRequirement } from '../../storage/sso-repo';
import { orgOf, principalOf, requirePermission, requirePlatformAdmin } from '../auth';
import { readBody } from '../body';
import type { ApiDeps } from '../deps';
import { parseOrThrow, pathParam, refuseQuery } from '../validation';

/** Version 0 maps no group: nobody set it, at no time. */
function mappingsView(v: VersionedGroupMappings) {
  return { version: v.version, mappings: v.mappings, updated_at: isoOrNull(v.created_at), updated_by: v.actor || null };
}

function requirementView(orgId: string, r: SsoRequirement) {
  return { org_id: orgId, required: r.required, person_keys_from_sign_in: r.person_keys_from_sign_in, updated_at: isoOrNull(r.updated_at), updated_by: r.actor || null };
}

/**
 * What a PUT takes: the document as GET answers it, `version` being the one
 * the edit started from (a stale one is 409 CONFLICT); the fields the service
 * sets (`updated_at`, `updated_by`) are ignored.
 */
export const mappingsPutSchema = z
  .object({
    version: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER),
    mappings: groupMappingsSchema,
    updated_at: z.string().max(64).nullable().optional(),
    updated_by: z.string().max(200).nullable().optional(),
  })
  .strict();

/** What a PUT changes; a field left out keeps its value. */
export const requirementPutSchema = z
  .object({
    required: z.boolean().optional().meta({ description: "refuse people's keys in the workspace: its people sign in" }),
    person_keys_from_sign_in: z
      .boolean()
      .optional()
      .meta({ description: "keys owned by a person are minted only through that person's own sign-in (console session or bearer token); the platform admin names no person there" }),
  })
  .strict()
  .refine((b) => b.required !== undefined || b.person_keys_from_sign_in !== undefined, 'name required, person_keys_from_sign_in or both');

/**
 * Single sign-on: a workspace's group mappings, read and set by its admins
 * (`keys:manage`: they decide who holds which role, as minting keys does),
 * and whether the platform admin requires single sign-on of its people.
 */
export function registerSsoRoutes(router: Router, deps: ApiDeps): void {
  const manage = requirePermission('keys:manage');

  router.get('/v1/sso/group-mappings', manage, async (ctx) => {
    refuseQuery(ctx.query);
    ctx.body = mappingsView(await deps.groupMappings.get(orgOf(ctx)));
  });

  router.put('/v1/sso/group-mappings', manage, async (ctx) => {
    const body = (await readBody(ctx, { limitBytes: deps.bodyLimitBytes, accept: ['json'] }))!.value;
    const doc = parseOrThrow(mappingsPutSchema, body, 'group mappings');
    ctx.body = mappingsView(await deps.groupMappings.put(orgOf(ctx), principalOf(ctx).keyId, doc.mappings, doc.version));
  });

  router.get('/v1/sso/group-mappings/versions', manage, async (ctx) => {
    refuseQuery(ctx.query);
    ctx.body = { data: (await deps.groupMappings.versions(orgOf(ctx))).map(mappingsView) };
  });

  const admin = requirePlatformAdmin();
  router.get('/v1/workspaces/:org_id/sso', admin, async (ctx) => {
    refuseQuery(ctx.query);
    const orgId = parseOrThrow(orgIdSchema, pathParam(ctx, 'org_id'), 'org_id');
    ctx.body = requirementView(orgId, await deps.ssoRequirements.get(orgId));
  });

  router.put('/v1/workspaces/:org_id/sso', admin, async (ctx) => {
    const orgId = parseOrThrow(orgIdSchema, pathParam(ctx, 'org_id'), 'org_id');
    const body = (await readBody(ctx, { limitBytes: deps.bodyLimitBytes, accept: ['json'] }))!.value;
    const change = parseOrThrow(requirementPutSchema, body, 'single sign-on requirement');
    ctx.body = requirementView(orgId, await deps.ssoRequirements.set(orgId, principalOf(ctx).keyId, change));
  });
}
