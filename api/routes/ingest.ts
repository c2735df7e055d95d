import type Router from '@koa/router';
import type { Context } from 'koa';
import { createHash, randomUUID } from 'node:crypto';
import type { z } from 'zod';
import { validationError, type ErrorDetail } from '../../core/errors';
import {
  flowRowJson,
  metricEventSchema,
  parseFlow,
  signalSchema,
  toMetricRow,
  toSignalRow,
  type StreamKind,
} from '../../core/telemetry';
import { orgOf, requirePermission } from '../auth';
import { readBody } from '../body';
import type { ApiDeps } from '../deps';
import { issuesToDetails } from '../validation';

/**
 * Telemetry ingestion: one record, a JSON array or NDJSON. A batch is
 * validated whole; one bad record refuses the batch (400, every bad index
 * named) and nothing of it is stored. The answer comes only after JetStream
 * acknowledged the batch.
 */
type Stamp = { org_id: string; event_id: string; ts: number; received_at: number };

interface IngestSpec<T> {
  kind: StreamKind;
  parse: (value: unknown) => z.ZodSafeParseResult<T>;
  /** The stored JSON line of a record and its event time. */
  toLine: (input: T, stamp: Stamp) => { json: string; ts: number };
}

const viaObject =
  <T>(toRow: (input: T, stamp: Stamp) => { ts: number }) =>
  (input: T, stamp: Stamp) => {
    const row = toRow(input, stamp);
    return { json: JSON.stringify(row), ts: row.ts };
  };

const maxDetails = 100;

/** Event ids of a batch: `evt_` + the batch's 16 hex characters + the record's index in 6 hex characters. */
export const eventIdOf = (batchHex: string, index: number) => `evt_${batchHex}${index.toString(16).padStart(6, '0')}`;

function batchHexOf(ctx: Context, orgId: string, kind: StreamKind, records: unknown[]): string {
  const idempotencyKey = ctx.get('idempotency-key');
  // randomUUID draws from a buffered entropy pool: far cheaper per request than randomBytes.
  if (!idempotencyKey) return randomUUID().replace(/-/g, '').slice(0, 16);
  if (idempotencyKey.length > 200) throw validationError('Idempotency-Key is at most 200 characters');
  // The same key and the same records from the same workspace name the same batch, so JetStream
  // stores a retry once; a key reused for other records names another batch instead of hiding it.
  return createHash('sha256')
    .update(`${orgId}\u0000${kind}\u0000${idempotencyKey}\u0000`)
    .update(JSON.stringify(records))
    .digest('hex')
    .slice(0, 16);
}

async function acceptBatch<T>(ctx: Context, deps: ApiDeps, spec: IngestSpec<T>) {
  const orgId = orgOf(ctx);
  const body = await readBody(ctx, { limitBytes: deps.bodyLimitBytes, accept: ['json', 'ndjson'] });
  const value = body!.value;
  const isBatch = body!.format === 'ndjson' || Array.isArray(value);
  const records = isBatch ? (value as unknown[]) : [value];
  if (records.length === 0) throw validationError('the batch holds no record');
  deps.rateLimiter.takeRecords(orgId, records.length);
  let batchHex: string;
  try {
    batchHex = await stampAndPublish(ctx, deps, spec, orgId, records);
  } catch (err) {
    // Records refused or not stored do not count against the workspace's rate.
    deps.rateLimiter.refundRecords(orgId, records.length);
    throw err;
  }
  return { isBatch, count: records.length, eventIds: () => records.map((_, i) => eventIdOf(batchHex, i)) };
}

/** Validates every record, stamps the valid ones and publishes them; returns the batch's hex id. */
async function stampAndPublish<T>(ctx: Context, deps: ApiDeps, spec: IngestSpec<T>, orgId: string, records: unknown[]): Promise<string> {
  const batchHex = batchHexOf(ctx, orgId, spec.kind, records);
  const receivedAt = Date.now();
  const lines: string[] = new Array(records.length);
  const details: ErrorDetail[] = [];
  let bad = 0;
  let minTs = Number.MAX_SAFE_INTEGER;
  let maxTs = 0;
  for (let i = 0; i < records.length; i += 1) {
    const parsed = spec.parse(records[i]);
    if (!parsed.success) {
      bad += 1;
      if (details.length < maxDetails) details.push(...issuesToDetails(parsed.error, i).slice(0, 5));
      continue;
    }
    const line = spec.toLine(parsed.data, { org_id: orgId, event_id: eventIdOf(batchHex, i), ts: receivedAt, received_at: receivedAt });
    if (line.ts < minTs) minTs = line.ts;
    if (line.ts > maxTs) maxTs = line.ts;
    lines[i] = line.json;
  }
  if (bad > 0) {
    deps.metrics.telemetryRejected.inc({ kind: spec.kind }, bad);
    throw validationError(`${bad} of ${records.length} record(s) are invalid; nothing was stored`, details);
  }
  await deps.publisher.publish(
    { kind: spec.kind, orgId, batchId: `${orgId}.${spec.kind}.${batchHex}`, lines, minTs, maxTs },
    { coalesce: !ctx.get('idempotency-key') },
  );
  return batchHex;
}

function accepted(ctx: Context, result: Awaited<ReturnType<typeof acceptBatch>>) {
  ctx.status = 202;
  ctx.body = result.isBatch
    ? { status: 'accepted', count: result.count, event_ids: result.eventIds() }
    : { status: 'accepted', event_id: result.eventIds()[0] };
}

export function registerIngestRoutes(router: Router, deps: ApiDeps): void {
  const guard = requirePermission('telemetry:write');

  router.post('/flow', guard, async (ctx) => {
    const result = await acceptBatch(ctx, deps, { kind: 'flow', parse: parseFlow, toLine: flowRowJson });
    ctx.status = 201;
    ctx.type = 'text/plain';
    ctx.set('X-Event-Count', String(result.count));
    ctx.body = result.isBatch ? `Flow saved (${result.count} flows)` : 'Flow saved';
  });

  router.post('/ingest', guard, async (ctx) => {
    accepted(ctx, await acceptBatch(ctx, deps, { kind: 'signal', parse: (v) => signalSchema.safeParse(v), toLine: viaObject(toSignalRow) }));
  });

  router.post('/v1/ingest/events', guard, async (ctx) => {
    accepted(ctx, await acceptBatch(ctx, deps, { kind: 'metric', parse: (v) => metricEventSchema.safeParse(v), toLine: viaObject(toMetricRow) }));
  });
}
