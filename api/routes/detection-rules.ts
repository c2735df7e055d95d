import type Router from '@koa/router';
import { z } from 'zod';
import { detectionRulesSchema, type VersionedRules } from '../../core/detection-rules';
import { isoOrNull } from '../../core/time';
import { orgOf, principalOf, requirePermission } from '../auth';
import { readBody } from '../body';
import type { ApiDeps } from '../deps';
import { parseOrThrow, pathParam, refuseQuery } from '../validation';

/** Version 0 is the defaults: nobody set them, at no time. */
function rulesView(v: VersionedRules) {
  return { version: v.version, rules: v.rules, updated_at: isoOrNull(v.created_at), updated_by: v.actor || null };
}

export const versionParam = z.coerce.number().int().min(0).max(Number.MAX_SAFE_INTEGER);
/** These reads take no query parameters: an unknown one is refused, as on every other route. */
export const noQuery = z.object({}).strict();

/**
 * A workspace's detection rules: read (`read`), replaced by the next
 * version (`rules:manage`), and any earlier version by number, as incidents
 * record it in `rules_version`.
 */
export function registerDetectionRuleRoutes(router: Router, deps: ApiDeps): void {
  const read = requirePermission('read');

  router.get('/v1/detection-rules', read, async (ctx) => {
    refuseQuery(ctx.query);
    ctx.body = rulesView(await deps.detectionRules.get(orgOf(ctx)));
  });

  router.put('/v1/detection-rules', requirePermission('rules:manage'), async (ctx) => {
    const body = (await readBody(ctx, { limitBytes: deps.bodyLimitBytes, accept: ['json'] }))!.value;
    const rules = parseOrThrow(detectionRulesSchema, body, 'detection rules');
    ctx.body = rulesView(await deps.detectionRules.put(orgOf(ctx), principalOf(ctx).keyId, rules));
  });

  router.get('/v1/detection-rules/versions/:version', read, async (ctx) => {
    refuseQuery(ctx.query);
    const version = parseOrThrow(versionParam, pathParam(ctx, 'version'), 'version');
    ctx.body = rulesView(await deps.detectionRules.version(orgOf(ctx), version));
  });
}
