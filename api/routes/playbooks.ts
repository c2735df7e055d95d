import type Router from '@koa/router';
import { z } from 'zod';
import { playbooksSchema, type PlaybooksDocument, type VersionedPlaybooks } from '../../core/playbooks';
import { iso } from '../../core/time';
import { orgOf, principalOf, requirePermission } from '../auth';
import { readBody } from '../body';
import type { ApiDeps } from '../deps';
import { answerGuarded } from './guardrails';
import { parseOrThrow, pathParam, refuseQuery } from '../validation';
import { versionParam } from './detection-rules';

/** Version 0 is the empty document: nobody set it, at no time. */
function playbooksView(v: VersionedPlaybooks) {
  return { version: v.version, playbooks: v.playbooks, updated_at: v.created_at === null ? null : iso(v.created_at), updated_by: v.actor || null };
}

/**
 * What a PUT takes: `{playbooks}`, or the document as GET answers it. In the
 * document, `version` is the one the edit started from (a stale one is 409
 * CONFLICT: someone changed the playbooks meanwhile) and the fields the
 * service sets (`updated_at`, `updated_by`) are ignored.
 */
export const documentSchema = playbooksSchema
  .extend({
    version: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER),
    updated_at: z.string().max(64).nullable().optional(),
    updated_by: z.string().max(200).nullable().optional(),
  })
  .strict();
export const putSchema = z.union([documentSchema, playbooksSchema]);

/** The playbooks a PUT gives, and the version it started from when it sent the document as read. */
function parsePut(body: unknown): { document: PlaybooksDocument; startedFrom?: number } {
  // Parsed by the one schema the body's shape names, so a refusal names the fields of that shape.
  if (body !== null && typeof body === 'object' && 'version' in body) {
    const { version, playbooks } = parseOrThrow(documentSchema, body, 'playbooks');
    return { document: { playbooks }, startedFrom: version };
  }
  return { document: parseOrThrow(playbooksSchema, body, 'playbooks') };
}

/**
 * A workspace's playbooks: read (`read`), replaced by the next version
 * (`playbooks:manage`), and any earlier version by number.
 */
export function registerPlaybookRoutes(router: Router, deps: ApiDeps): void {
  const read = requirePermission('read');

  router.get('/v1/playbooks', read, async (ctx) => {
    refuseQuery(ctx.query);
    ctx.body = playbooksView(await deps.playbooks.get(orgOf(ctx)));
  });

  router.put('/v1/playbooks', requirePermission('playbooks:manage'), async (ctx) => {
    const body = (await readBody(ctx, { limitBytes: deps.bodyLimitBytes, accept: ['json'] }))!.value;
    const { document, startedFrom } = parsePut(body);
    answerGuarded(ctx, await deps.playbooks.put(orgOf(ctx), principalOf(ctx).keyId, document, startedFrom), playbooksView);
  });

  router.get('/v1/playbooks/versions/:version', read, async (ctx) => {
    refuseQuery(ctx.query);
    const version = parseOrThrow(versionParam, pathParam(ctx, 'version'), 'version');
    ctx.body = playbooksView(await deps.playbooks.version(orgOf(ctx), version));
  });
}
