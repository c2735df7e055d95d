import type Router from '@koa/router';
import type { Context } from 'koa';
import type { StreamKind } from '../../core/telemetry';
import type { IngestResult } from '../../application/ingest-service';
import { orgOf, requirePermission } from '../auth';
import { readBody } from '../body';
import type { ApiDeps } from '../deps';

/**
 * Telemetry ingestion: one record, a JSON array or NDJSON. The answer comes
 * only after JetStream acknowledged the batch (see IngestService).
 */
async function acceptBody(ctx: Context, deps: ApiDeps, kind: StreamKind): Promise<IngestResult & { isBatch: boolean }> {
  const body = (await readBody(ctx, { limitBytes: deps.bodyLimitBytes, accept: ['json', 'ndjson'] }))!;
  const isBatch = body.format === 'ndjson' || Array.isArray(body.value);
  const records = isBatch ? (body.value as unknown[]) : [body.value];
  const idempotencyKey = ctx.get('idempotency-key') || undefined;
  const result = await deps.ingest.accept({ orgId: orgOf(ctx), kind, records, idempotencyKey });
  return { ...result, isBatch };
}

function accepted(ctx: Context, result: IngestResult & { isBatch: boolean }) {
  ctx.status = 202;
  ctx.body = result.isBatch
    ? { status: 'accepted', count: result.count, event_ids: result.eventIds() }
    : { status: 'accepted', event_id: result.eventIds()[0] };
}

export function registerIngestRoutes(router: Router, deps: ApiDeps): void {
  const guard = requirePermission('telemetry:write');

  router.post('/flow', guard, async (ctx) => {
    const result = await acceptBody(ctx, deps, 'flow');
    ctx.status = 201;
    ctx.type = 'text/plain';
    ctx.set('X-Event-Count', String(result.count));
    ctx.body = result.isBatch ? `Flow saved (${result.count} flows)` : 'Flow saved';
  });

  router.post('/ingest', guard, async (ctx) => {
    accepted(ctx, await acceptBody(ctx, deps, 'signal'));
  });

  router.post('/v1/ingest/events', guard, async (ctx) => {
    accepted(ctx, await acceptBody(ctx, deps, 'metric'));
  });
}
