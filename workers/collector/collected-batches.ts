import { randomBytes } from 'node:crypto';
import { recordEventId } from '../../core/ids';
import type { Logger } from '../../observability/logger';
import type { TelemetryBatch } from '../../streams/telemetry-publisher';
import type { CollectorMetrics } from './collector-metrics';

export interface BatchPublisher {
  publish(batch: TelemetryBatch, opts: { coalesce: boolean }): Promise<void>;
}

export interface CollectedBatchesConfig {
  /** A batch is published when it holds this many flows... */
  maxFlows: number;
  /** ...or when its first flow has waited this long. */
  maxWaitMs: number;
  /** Batches published but not yet acknowledged; past this the collector stops reading GoFlow2. */
  maxInFlight: number;
  /** Wait between attempts to publish a batch JetStream refused. */
  retryDelayMs: number;
}

interface Pending {
  orgId: string;
  exporter: string;
  hex: string;
  lines: string[];
  /** Each line's detection digest (core/flow.ts flowDigestLine). */
  digests: string[];
  minTs: number;
  maxTs: number;
}

/**
 * Collected flows grouped per workspace and exporter into JetStream
 * messages, the same messages the HTTP path publishes (JSONEachRow lines of
 * stamped flows). A batch JetStream does not acknowledge is published again
 * with the same message id (so it is stored once) until it is, while the
 * collector stops reading GoFlow2: a flow that reached a batch is not lost
 * to an outage of NATS.
 */
export class CollectedBatches {
  private readonly pending = new Map<string, Pending>();
  private inFlight = 0;
  private timer?: NodeJS.Timeout;
  private stopping = false;
  private readonly drained: Array<() => void> = [];

  constructor(
    private readonly config: CollectedBatchesConfig,
    private readonly deps: { publisher: BatchPublisher; metrics: CollectorMetrics; log: Logger; onPressure(paused: boolean): void },
  ) {}

  /** The event id the next flow of this workspace and exporter gets (its batch id and index). */
  add(orgId: string, exporter: string, line: (eventId: string) => { json: string; ts: number; digest: string }): void {
    const key = `${orgId}|${exporter}`;
    let batch = this.pending.get(key);
    if (!batch) {
      batch = { orgId, exporter, hex: randomBytes(8).toString('hex'), lines: [], digests: [], minTs: Infinity, maxTs: -Infinity };
      this.pending.set(key, batch);
      this.timer ??= setTimeout(() => this.flushAll(), this.config.maxWaitMs);
    }
    const { json, ts, digest } = line(recordEventId(batch.hex, batch.lines.length));
    batch.lines.push(json);
    batch.digests.push(digest);
    if (ts < batch.minTs) batch.minTs = ts;
    if (ts > batch.maxTs) batch.maxTs = ts;
    if (batch.lines.length >= this.config.maxFlows) {
      this.pending.delete(key);
      this.send(batch);
    }
  }

  get paused(): boolean {
    return this.inFlight >= this.config.maxInFlight;
  }

  flushAll(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    for (const batch of this.pending.values()) this.send(batch);
    this.pending.clear();
  }

  private send(p: Pending): void {
    const batch: TelemetryBatch = {
      kind: 'flow',
      orgId: p.orgId,
      exporter: p.exporter,
      batchId: `${p.orgId}.flow.c${p.hex}`,
      lines: p.lines,
      digests: p.digests,
      minTs: p.minTs,
      maxTs: p.maxTs,
    };
    this.inFlight += 1;
    if (this.inFlight === this.config.maxInFlight) this.deps.onPressure(true);
    void this.publishUntilStored(batch).finally(() => {
      this.inFlight -= 1;
      if (this.inFlight === Math.floor(this.config.maxInFlight / 2)) this.deps.onPressure(false);
      if (this.inFlight === 0) this.drained.splice(0).forEach((resolve) => resolve());
    });
  }

  private async publishUntilStored(batch: TelemetryBatch): Promise<void> {
    for (;;) {
      try {
        await this.deps.publisher.publish(batch, { coalesce: false });
        this.deps.metrics.flows.inc(batch.lines.length);
        return;
      } catch (err) {
        if (this.stopping) {
          this.deps.metrics.droppedFlows.inc({ reason: 'shutdown' }, batch.lines.length);
          this.deps.log.error({ err, flows: batch.lines.length }, 'collected flows dropped: JetStream refused them while the collector stopped');
          return;
        }
        this.deps.metrics.publishRetries.inc();
        this.deps.log.warn({ err: (err as Error).message }, 'JetStream refused a batch of collected flows; publishing it again');
        await new Promise((resolve) => setTimeout(resolve, this.config.retryDelayMs));
      }
    }
  }

  /** Publishes what is pending and waits for every batch in flight, up to `timeoutMs`; later failures are dropped. */
  async drain(timeoutMs: number): Promise<void> {
    this.flushAll();
    if (this.inFlight === 0) return;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      new Promise<void>((resolve) => this.drained.push(resolve)),
      new Promise<void>((resolve) => (timer = setTimeout(resolve, timeoutMs))),
    ]);
    clearTimeout(timer);
    this.stopping = true;
  }
}
