import type Router from '@koa/router';
import type { Context } from 'koa';
import { z } from 'zod';
import type { PendingExporter } from '../../application/exporter-service';
import { exporterStatuses, type Exporter, type UnknownExporter } from '../../core/exporter';
import { ip } from '../../core/telemetry';
import { iso } from '../../core/time';
import { orgOf, principalOf, requirePermission, requirePlatformAdmin } from '../auth';
import { readBody } from '../body';
import type { ApiDeps } from '../deps';
import { decodeCursor, limitSchema, pageOf } from '../pagination';
import { knownIdForm, parseOrThrow, pathParam, singleQuery } from '../validation';

const name = z.string().trim().min(1).max(200);
// null: no sampling rate registered.
const samplingRate = z.number().int().min(1).max(1_000_000).nullable();
export const createSchema = z.object({ address: ip, name: name.optional(), sampling_rate: samplingRate.optional() }).strict();
export const patchSchema = z
  .object({ name: name.optional(), sampling_rate: samplingRate.optional() })
  .strict()
  .refine((p) => Object.keys(p).length > 0, 'nothing to change');
export const listSchema = z
  .object({ status: z.enum(exporterStatuses).optional(), limit: limitSchema, cursor: z.string().max(512).optional() })
  .strict();
export const pendingSchema = z.object({ limit: limitSchema, cursor: z.string().max(512).optional() }).strict();
export const unknownSchema = z.object({ limit: limitSchema }).strict();
const cursorSchema = z.object({ created_at: z.number().int(), id: z.string().max(64) });

function exporterView(e: Exporter) {
  return {
    id: e.id,
    address: e.address,
    name: e.name,
    sampling_rate: e.sampling_rate || null,
    status: e.status,
    created_at: iso(e.created_at),
    updated_at: iso(e.updated_at),
    version: e.version,
  };
}

/** The platform admin's view: whose exporter it is too. */
const adminView = (e: Exporter) => ({ org_id: e.org_id, ...exporterView(e) });

function pendingView(e: PendingExporter) {
  return { ...adminView(e), address_active_for: e.activeAtAddress ? { org_id: e.activeAtAddress.org_id, exporter_id: e.activeAtAddress.id } : null };
}

function unknownView(u: UnknownExporter) {
  return { address: u.address, first_seen: iso(u.first_seen), last_seen: iso(u.last_seen), datagrams: u.datagrams, flows: u.flows };
}

const exporterId = (ctx: Context) => knownIdForm('exp', pathParam(ctx, 'id'), 'exporter');

export function registerExporterRoutes(router: Router, deps: ApiDeps): void {
  const manage = requirePermission('exporters:manage');
  const read = requirePermission('read');
  const body = async (ctx: Context) => (await readBody(ctx, { limitBytes: deps.bodyLimitBytes, accept: ['json'] }))!.value;

  router.post('/v1/exporters', manage, async (ctx) => {
    const input = parseOrThrow(createSchema, await body(ctx), 'exporter');
    ctx.status = 201;
    ctx.body = exporterView(await deps.exporters.create(orgOf(ctx), principalOf(ctx).keyId, input));
  });

  router.get('/v1/exporters', read, async (ctx) => {
    const q = parseOrThrow(listSchema, singleQuery(ctx.query), 'query');
    const rows = await deps.exporters.list(orgOf(ctx), { status: q.status, limit: q.limit + 1, after: decodeCursor(q.cursor, cursorSchema) });
    ctx.body = pageOf(rows, q.limit, (e) => ({ created_at: e.created_at, id: e.id }), exporterView);
  });

  // Before /:id, so that "unknown" and "pending" are not taken for ids.
  router.get('/v1/exporters/unknown', requirePlatformAdmin(), async (ctx) => {
    const q = parseOrThrow(unknownSchema, singleQuery(ctx.query), 'query');
    ctx.body = { data: (await deps.exporters.unknown(q.limit)).map(unknownView) };
  });

  router.get('/v1/exporters/pending', requirePlatformAdmin(), async (ctx) => {
    const q = parseOrThrow(pendingSchema, singleQuery(ctx.query), 'query');
    const rows = await deps.exporters.pending({ limit: q.limit + 1, after: decodeCursor(q.cursor, cursorSchema) });
    ctx.body = pageOf(rows, q.limit, (e) => ({ created_at: e.created_at, id: e.id }), pendingView);
  });

  router.post('/v1/exporters/:id/approve', requirePlatformAdmin(), async (ctx) => {
    ctx.body = adminView(await deps.exporters.approve(principalOf(ctx).keyId, exporterId(ctx)));
  });

  router.post('/v1/exporters/:id/reject', requirePlatformAdmin(), async (ctx) => {
    ctx.body = adminView(await deps.exporters.reject(principalOf(ctx).keyId, exporterId(ctx)));
  });

  router.get('/v1/exporters/:id', read, async (ctx) => {
    ctx.body = exporterView(await deps.exporters.get(orgOf(ctx), exporterId(ctx)));
  });

  router.patch('/v1/exporters/:id', manage, async (ctx) => {
    const id = exporterId(ctx);
    const change = parseOrThrow(patchSchema, await body(ctx), 'exporter change');
    ctx.body = exporterView(await deps.exporters.update(orgOf(ctx), principalOf(ctx).keyId, id, change));
  });

  router.delete('/v1/exporters/:id', manage, async (ctx) => {
    ctx.body = exporterView(await deps.exporters.delete(orgOf(ctx), principalOf(ctx).keyId, exporterId(ctx)));
  });
}
