import { createHash, randomUUID } from 'node:crypto';
import type { z } from 'zod';
import { validationError, type ErrorDetail } from '../core/errors';
import { recordEventId } from '../core/ids';
import { flowRowJson, parseFlow, type FlowInput } from '../core/flow';
import { metricEventSchema, signalSchema, toMetricRow, toSignalRow, type StreamKind } from '../core/telemetry';
import { zodIssueDetails } from '../core/errors';
import { counter, type Registry } from '../observability/metrics';
import type { TelemetryPublisher } from '../streams/telemetry-publisher';
import type { FlowEnricher } from './enrichment/address-enrichment';
import type { RateLimiter } from './rate-limiter';

type Stamp = { org_id: string; event_id: string; ts: number; received_at: number };

interface KindSpec<T> {
  parse: (value: unknown) => z.ZodSafeParseResult<T>;
  /** The stored JSON line of a record and its event time; a flow's detection digest line too (core/flow.ts flowDigestLine). */
  toLine: (input: T, stamp: Stamp, enricher?: FlowEnricher) => { json: string; ts: number; digest?: string };
}

const viaObject =
  <T>(toRow: (input: T, stamp: Stamp) => { ts: number }) =>
  (input: T, stamp: Stamp) => {
    const row = toRow(input, stamp);
    return { json: JSON.stringify(row), ts: row.ts };
  };

// Each spec's toLine takes what its own parse gave: the table forgets the type, the pairing keeps it.
const spec = <T>(s: KindSpec<T>) => s as unknown as KindSpec<unknown>;
const specs: Record<StreamKind, KindSpec<unknown>> = {
  flow: spec({ parse: parseFlow, toLine: (input: FlowInput, stamp, enricher) => {
      // Enriched first: it fills the AS numbers the exporter did not send into the flow itself.
      const tail = enricher?.tailOf(stamp.org_id, input);
      return flowRowJson(input, stamp, tail);
    },
  }),
  signal: spec({ parse: (v) => signalSchema.safeParse(v), toLine: viaObject(toSignalRow) }),
  metric: spec({ parse: (v) => metricEventSchema.safeParse(v), toLine: viaObject(toMetricRow) }),
};

const maxDetails = 100;
const maxIdempotencyKeyLength = 200;

export interface IngestRequest {
  orgId: string;
  kind: StreamKind;
  records: unknown[];
  idempotencyKey?: string;
}

export interface IngestResult {
  count: number;
  eventIds(): string[];
}

/**
 * Telemetry ingestion: a batch of one or more records is validated whole;
 * one bad record refuses the batch (every bad index named) and nothing of it
 * is stored. It resolves only after JetStream acknowledged the batch.
 */
export class IngestService {
  private readonly rejected;

  constructor(
    private readonly deps: { publisher: TelemetryPublisher; rateLimiter: RateLimiter; registry: Registry; enricher?: FlowEnricher; now?: () => number },
  ) {
    this.rejected = counter(deps.registry, {
      name: 'nettel_telemetry_rejected_records_total',
      help: 'Telemetry records refused by validation, by kind',
      labelNames: ['kind'] as const,
    });
  }

  async accept(request: IngestRequest): Promise<IngestResult> {
    const { orgId, records } = request;
    if (records.length === 0) throw validationError('the batch holds no record');
    if (request.idempotencyKey !== undefined && request.idempotencyKey.length > maxIdempotencyKeyLength) {
      throw validationError(`Idempotency-Key is at most ${maxIdempotencyKeyLength} characters`);
    }
    this.deps.rateLimiter.take(orgId, records.length);
    let batchHex: string;
    try {
      batchHex = await this.stampAndPublish(request);
    } catch (err) {
      // Records refused or not stored do not count against the workspace's rate.
      this.deps.rateLimiter.refund(orgId, records.length);
      throw err;
    }
    return { count: records.length, eventIds: () => records.map((_, i) => recordEventId(batchHex, i)) };
  }

  /** Validates every record, stamps the valid ones and publishes them; returns the batch's hex id. */
  private async stampAndPublish(request: IngestRequest): Promise<string> {
    const { orgId, kind, records } = request;
    const kindSpec = specs[kind];
    const batchHex = batchHexOf(request);
    const receivedAt = (this.deps.now ?? Date.now)();
    const lines: string[] = new Array<string>(records.length);
    const digests: string[] | undefined = kind === 'flow' ? new Array<string>(records.length) : undefined;
    const details: ErrorDetail[] = [];
    let bad = 0;
    let minTs = Number.MAX_SAFE_INTEGER;
    let maxTs = 0;
    for (let i = 0; i < records.length; i += 1) {
      const parsed = kindSpec.parse(records[i]);
      if (!parsed.success) {
        bad += 1;
        if (details.length < maxDetails) details.push(...zodIssueDetails(parsed.error, i).slice(0, 5));
        continue;
      }
      const line = kindSpec.toLine(parsed.data, { org_id: orgId, event_id: recordEventId(batchHex, i), ts: receivedAt, received_at: receivedAt }, this.deps.enricher);
      if (line.ts < minTs) minTs = line.ts;
      if (line.ts > maxTs) maxTs = line.ts;
      lines[i] = line.json;
      if (digests) digests[i] = line.digest!;
    }
    if (bad > 0) {
      this.rejected.inc({ kind }, bad);
      throw validationError(`${bad} of ${records.length} record(s) are invalid; nothing was stored`, details);
    }
    await this.deps.publisher.publish(
      { kind, orgId, batchId: `${orgId}.${kind}.${batchHex}`, lines, digests, minTs, maxTs, idempotent: request.idempotencyKey !== undefined },
      { coalesce: request.idempotencyKey === undefined },
    );
    return batchHex;
  }
}

function batchHexOf(request: IngestRequest): string {
  // randomUUID draws from a buffered entropy pool: far cheaper per request than randomBytes.
  if (request.idempotencyKey === undefined) return randomUUID().replace(/-/g, '').slice(0, 16);
  // The same key and the same records from the same workspace name the same batch, so JetStream
  // stores a retry once; a key reused for other records names another batch instead of hiding it.
  return createHash('sha256')
    .update(`${request.orgId}\u0000${request.kind}\u0000${request.idempotencyKey}\u0000`)
    .update(JSON.stringify(request.records))
    .digest('hex')
    .slice(0, 16);
}
