import type Router from '@koa/router';
import { z } from 'zod';
import { detectionRulesSchema, type DetectionRules, type VersionedRules } from '../../core/detection-rules';
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

/**
 * What a PUT takes: the rules alone, or the document as GET answers it. In
 * the document, `version` is the one the edit started from (a stale one is
 * 409 CONFLICT: someone changed the rules meanwhile) and the fields the
 * service sets (`updated_at`, `updated_by`) are ignored.
 */
export const documentSchema = z
  .object({
    version: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER),
    rules: detectionRulesSchema,
    updated_at: z.string().max(64).nullable().optional(),
    updated_by: z.string().max(200).nullable().optional(),
  })
  .strict();
export const putSchema = z.union([documentSchema, detectionRulesSchema]);

/** The rules a PUT gives, and the version it started from when it sent the document as read. */
function parsePut(body: unknown): { rules: DetectionRules; startedFrom?: number } {
  // Parsed by the one schema the body's shape names, so a refusal names the fields of that shape.
  if (body !== null && typeof body === 'object' && 'rules' in body) {
    const doc = parseOrThrow(documentSchema, body, 'detection rules');
    return { rules: doc.rules, startedFrom: doc.version };
  }
  return { rules: parseOrThrow(detectionRulesSchema, body, 'detection rules') };
}

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
    const { rules, startedFrom } = parsePut(body);
    ctx.body = rulesView(await deps.detectionRules.put(orgOf(ctx), principalOf(ctx).keyId, rules, startedFrom));
  });

  router.get('/v1/detection-rules/versions/:version', read, async (ctx) => {
    refuseQuery(ctx.query);
    const version = parseOrThrow(versionParam, pathParam(ctx, 'version'), 'version');
    ctx.body = rulesView(await deps.detectionRules.version(orgOf(ctx), version));
  });
}
