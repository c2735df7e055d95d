import type { Logger } from '../observability/logger';
import { ClickHouseError } from '../storage/clickhouse';
import { UnreadableMessageError } from './batch-writer';
import type { StreamWorkerMetrics } from './stream-worker-metrics';
import type { DeadLetterSink, WorkMessage } from './stream-worker-ports';

/** The longest a failed message waits before JetStream offers it again. */
export const maxNakDelayMs = 30_000;

export interface GiveBackPolicy {
  /** Delay before a failed message is offered again; doubles with each delivery, up to 30 s. */
  retryDelayMs: number;
  /** Deliveries after which a message ClickHouse keeps refusing goes to the dead-letter stream. */
  maxDeliveries: number;
}

/** How long a message that failed on its nth delivery waits before the next one. */
export function nakDelayMs(deliveries: number, retryDelayMs: number): number {
  return Math.min(maxNakDelayMs, retryDelayMs * 2 ** Math.max(0, deliveries - 1));
}

/**
 * Whether a failure is the message's own fault, so that no retry will
 * change it: ClickHouse refused the rows (it answered with a server error
 * code), or the body is not NDJSON. An outage (no answer, no code) and any
 * other error are retried however long they last, since nothing is wrong
 * with the message.
 */
export function refusedForGood(err: unknown): boolean {
  if (err instanceof ClickHouseError) return err.code !== undefined;
  return err instanceof UnreadableMessageError;
}

export type GiveBackDecision = { action: 'dead-letter' } | { action: 'retry'; delayMs: number };

/** A failed message is offered again with a growing delay, or dead-lettered once refused maxDeliveries times. */
export function giveBackDecision(err: unknown, deliveries: number, policy: GiveBackPolicy): GiveBackDecision {
  if (refusedForGood(err) && deliveries >= policy.maxDeliveries) return { action: 'dead-letter' };
  return { action: 'retry', delayMs: nakDelayMs(deliveries, policy.retryDelayMs) };
}

/**
 * Handles one flushed batch: written whole and acknowledged when it can be;
 * otherwise each of its messages is retried on its own, so one bad message
 * does not hold the others back, and each that fails again is given back.
 */
export class BatchHandler {
  constructor(
    private readonly policy: GiveBackPolicy,
    private readonly deps: {
      process: (batch: WorkMessage[], opts?: { retry?: boolean }) => Promise<void>;
      deadLetters: DeadLetterSink;
      metrics: StreamWorkerMetrics;
      log: Logger;
    },
  ) {}

  async handle(batch: WorkMessage[]): Promise<void> {
    try {
      await this.deps.process(batch);
      for (const m of batch) m.ack();
      this.deps.metrics.batches.inc({ outcome: 'written' });
      return;
    } catch (err) {
      this.deps.metrics.batches.inc({ outcome: 'failed' });
      this.deps.log.error({ err, messages: batch.length }, 'unable to process telemetry batch; retrying its messages one by one');
    }
    // The failed attempt may have written some rows, so every message is checked for them first.
    for (const m of batch) {
      try {
        await this.deps.process([m], { retry: true });
        m.ack();
      } catch (err) {
        await this.giveBack(m, err);
      }
    }
  }

  private async giveBack(m: WorkMessage, err: unknown): Promise<void> {
    const deliveries = m.info.redeliveryCount;
    const decision = giveBackDecision(err, deliveries, this.policy);
    if (decision.action === 'dead-letter') {
      try {
        await this.deps.deadLetters.deadLetter(m, err);
        m.term();
        this.deps.metrics.deadLetters.inc();
        this.deps.log.error({ err, subject: m.subject, deliveries }, 'message moved to the dead-letter stream');
        return;
      } catch (publishErr) {
        this.deps.metrics.engineErrors.inc({ engine: 'nats', operation: 'dead_letter' });
        this.deps.log.error({ err: publishErr }, 'unable to dead-letter a message; it will be redelivered');
      }
    }
    m.nak(decision.action === 'retry' ? decision.delayMs : nakDelayMs(deliveries, this.policy.retryDelayMs));
  }
}
