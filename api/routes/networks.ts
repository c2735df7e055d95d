import type Router from '@koa/router';
import { z } from 'zod';
import { networksSchema, type Networks, type VersionedNetworks } from '../../core/enrichment/networks';
import { isoOrNull } from '../../core/time';
import { orgOf, principalOf, requirePermission } from '../auth';
import { readBody } from '../body';
import type { ApiDeps } from '../deps';
import { parseOrThrow, pathParam, refuseQuery } from '../validation';
import { versionParam } from './detection-rules';

/** Version 0 is no networks: nobody set them, at no time. */
function networksView(v: VersionedNetworks) {
  return { version: v.version, networks: v.networks, updated_at: isoOrNull(v.created_at), updated_by: v.actor || null };
}

/**
 * What a PUT takes: `{networks}`, or the document as GET answers it, whose
 * `version` is the one the edit started from (a stale one is 409 CONFLICT)
 * and whose `updated_at` and `updated_by` are ignored.
 */
export const documentSchema = z
  .object({
    version: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER),
    networks: networksSchema.shape.networks,
    updated_at: z.string().max(64).nullable().optional(),
    updated_by: z.string().max(200).nullable().optional(),
  })
  .strict();
export const putSchema = z.union([documentSchema, networksSchema]);

function parsePut(body: unknown): { doc: Networks; startedFrom?: number } {
  // Parsed by the one schema the body's shape names, so a refusal names the fields of that shape.
  if (body !== null && typeof body === 'object' && 'version' in body) {
    const { version, networks } = parseOrThrow(documentSchema, body, 'networks');
    // The duplicate check lives on the document schema.
    return { doc: parseOrThrow(networksSchema, { networks }, 'networks'), startedFrom: version };
  }
  return { doc: parseOrThrow(networksSchema, body, 'networks') };
}

/**
 * A workspace's own networks (docs/enrichment.md): read (`read`), replaced
 * by the next version (`rules:manage`, as the detection rules), and any
 * earlier version by number. They label the flows stored after a change.
 */
export function registerNetworkRoutes(router: Router, deps: ApiDeps): void {
  const read = requirePermission('read');

  router.get('/v1/networks', read, async (ctx) => {
    refuseQuery(ctx.query);
    ctx.body = networksView(await deps.networks.get(orgOf(ctx)));
  });

  router.put('/v1/networks', requirePermission('rules:manage'), async (ctx) => {
    const body = (await readBody(ctx, { limitBytes: deps.bodyLimitBytes, accept: ['json'] }))!.value;
    const { doc, startedFrom } = parsePut(body);
    ctx.body = networksView(await deps.networks.put(orgOf(ctx), principalOf(ctx).keyId, doc, startedFrom));
  });

  router.get('/v1/networks/versions/:version', read, async (ctx) => {
    refuseQuery(ctx.query);
    const version = parseOrThrow(versionParam, pathParam(ctx, 'version'), 'version');
    ctx.body = networksView(await deps.networks.version(orgOf(ctx), version));
  });
}
