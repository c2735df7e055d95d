import { backoffDelayMs } from '../../core/backoff';
import { classifyWriteFailure, type FailureVerdict } from '../../core/write-failure';
import type { Logger } from '../../observability/logger';
import { ClickHouseError } from '../../storage/clickhouse';
import type { StreamWorkerMetrics } from './stream-worker-metrics';
import { RefusedMessageError, screenMessage } from './message-screen';
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
  return backoffDelayMs({ firstMs: retryDelayMs, maxMs: maxNakDelayMs }, deliveries);
}

/** A system error code anywhere in the error's chain of causes (the HTTP client's ECONNREFUSED under the ClickHouseError). */
function systemCodeOf(err: unknown): string | undefined {
  for (let e = err as { code?: unknown; cause?: unknown } | undefined, depth = 0; e && depth < 5; e = e.cause as typeof e, depth += 1) {
    if (typeof e.code === 'string' && /^(E[A-Z]+|UND_ERR_[A-Z_]+)$/.test(e.code)) return e.code;
  }
  return undefined;
}

/** What a failed write's error says, classified (core/write-failure). */
export function failureOf(err: unknown): FailureVerdict {
  return classifyWriteFailure({
    clickhouseCode: err instanceof ClickHouseError ? err.code : undefined,
    systemCode: systemCodeOf(err),
    name: err instanceof Error ? err.name : undefined,
  });
}

export type GiveBackDecision = { action: 'dead-letter' } | { action: 'retry'; delayMs: number };

/**
 * A message that failed is offered again with a growing delay. A transient
 * failure is retried however long it lasts; a refusal of the rows (or an
 * answer whose code is unknown) is dead-lettered once the message was
 * delivered maxDeliveries times: the retries leave a schema migration that
 * lags a rolling deploy the time to land.
 */
export function giveBackDecision(err: unknown, deliveries: number, policy: GiveBackPolicy): GiveBackDecision {
  if (failureOf(err).class !== 'transient' && deliveries >= policy.maxDeliveries) return { action: 'dead-letter' };
  return { action: 'retry', delayMs: nakDelayMs(deliveries, policy.retryDelayMs) };
}

/** A transient failure that lasts: what the worker's health probe reports until a write succeeds. */
export interface WriteOutage {
  since: number;
  reason: string;
}

/** How many times the rest of a written batch is run again on a transient failure before its messages are retried one by one. */
export const restRetries = 3;

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** What is left of a batch once its rows are stored, up to its acknowledgement (see BatchHandler). */
export type RestOfBatch = () => Promise<void>;

/**
 * Handles one flushed batch: written whole and acknowledged when it can be;
 * otherwise each of its messages is retried on its own, so one bad message
 * does not hold the others back, and each that fails again is given back.
 *
 * A batch is handled in two stages: its write (the rows stored), then the
 * rest (the signals and incidents the stored rows make, the detectors'
 * copy), after which it is acknowledged. The next batch is written while
 * this one's rest runs: ClickHouse takes one statement at a time, and a
 * write waiting for the rest of the batch before it left the engine idle
 * for as long as it ran (BENCHMARKS.md). The rests run one at a time, in
 * order, so at most two batches are held. A batch's stored rows are
 * checked for before it is written, and the batch before it was written by
 * then, so the overlap doubles no row.
 */
export class BatchHandler {
  private outage?: WriteOutage;
  /** The rest of the batch before: the next rest starts after it. */
  private previousRest: Promise<void> = Promise.resolve();

  constructor(
    private readonly policy: GiveBackPolicy,
    private readonly deps: {
      /** Stores a batch's rows; resolves to the rest of its handling. */
      write: (batch: WorkMessage[]) => Promise<RestOfBatch>;
      /** The whole handling of a batch, for a retry (each message on its own, maybe stored already). */
      process: (batch: WorkMessage[], opts?: { retry?: boolean }) => Promise<void>;
      deadLetters: DeadLetterSink;
      metrics: StreamWorkerMetrics;
      log: Logger;
      now?: () => number;
    },
  ) {}

  /** Since when writes fail for a transient reason; undefined once one succeeds. */
  get failingSince(): WriteOutage | undefined {
    return this.outage;
  }

  /** Handles a batch; `written` is called once the next batch may be written (this one's rows stored, the rest before it done). */
  async handle(pulled: WorkMessage[], written: () => void = () => undefined): Promise<void> {
    const batch = await this.refuseForged(pulled);
    if (batch.length === 0) return;
    let rest: RestOfBatch | undefined;
    let failure: unknown;
    try {
      rest = await this.deps.write(batch);
    } catch (err) {
      failure = err;
    }
    await this.previousRest;
    const finished = this.finish(batch, rest, failure);
    this.previousRest = finished.catch(() => undefined);
    written();
    await finished;
  }

  /**
   * Runs the rest of a written batch and acknowledges it; a batch that
   * failed anywhere is retried message by message. A rest that fails for a
   * transient reason (NATS slow to take the detectors' copy under a flood,
   * ClickHouse busy) is first run again whole, after 1, 2 and 4 retry
   * delays: its rows are stored, and retrying each message alone would add
   * a lookup, an insert and a copy per message to an engine already behind.
   */
  private async finish(batch: WorkMessage[], rest: RestOfBatch | undefined, failure: unknown): Promise<void> {
    if (rest) {
      try {
        await this.untilDone(batch, rest);
        for (const m of batch) m.ack();
        this.deps.metrics.batches.inc({ outcome: 'written' });
        this.outage = undefined;
        return;
      } catch (err) {
        failure = err;
      }
    }
    this.deps.metrics.batches.inc({ outcome: 'failed' });
    this.deps.log.error({ err: failure, messages: batch.length }, 'unable to process telemetry batch; retrying its messages one by one');
    // The failed attempt may have written some rows, so every message is checked for them first.
    for (const m of batch) {
      try {
        await this.deps.process([m], { retry: true });
        m.ack();
        this.outage = undefined;
      } catch (err) {
        await this.giveBack(m, err);
      }
    }
  }

  /** Runs the rest, again on a transient failure (restRetries times at most; the batcher keeps the messages alive meanwhile). */
  private async untilDone(batch: WorkMessage[], rest: RestOfBatch): Promise<void> {
    for (let attempt = 0; ; attempt += 1) {
      try {
        return await rest();
      } catch (err) {
        const failure = failureOf(err);
        if (failure.class !== 'transient' || attempt >= restRetries) throw err;
        this.deps.metrics.restRetries.inc({ reason: failure.reason });
        this.deps.log.warn({ err, messages: batch.length, attempt: attempt + 1 }, 'the rest of a written batch failed; running it again');
        await sleep(nakDelayMs(attempt + 1, this.policy.retryDelayMs));
      }
    }
  }

  /**
   * Messages the screen refuses (message-screen.ts) go to the dead-letter
   * stream at once, before any of their bytes reach the engine: no retry
   * changes them. Returns the others.
   */
  private async refuseForged(batch: WorkMessage[]): Promise<WorkMessage[]> {
    const accepted: WorkMessage[] = [];
    for (const m of batch) {
      const verdict = screenMessage(m);
      if (verdict.ok) {
        accepted.push(m);
        continue;
      }
      this.deps.metrics.messagesRefused.inc({ reason: verdict.reason });
      const err = new RefusedMessageError(m.subject, verdict.reason);
      if (!(await this.deadLetter(m, err, verdict.reason))) m.nak(nakDelayMs(m.info.redeliveryCount, this.policy.retryDelayMs));
    }
    return accepted;
  }

  /** Moves a message to the dead-letter stream and terminates it; false when that stream refused it (it stays in the telemetry stream). */
  private async deadLetter(m: WorkMessage, err: unknown, reason: string): Promise<boolean> {
    try {
      await this.deps.deadLetters.deadLetter(m, err);
      m.term();
      // Work moved on: an outage reported earlier is not this message's to keep reporting.
      this.outage = undefined;
      this.deps.metrics.deadLetters.inc();
      this.deps.log.error({ err, subject: m.subject, deliveries: m.info.redeliveryCount, reason }, 'message moved to the dead-letter stream');
      return true;
    } catch (publishErr) {
      // A full (or unreachable) dead-letter stream refuses: the message stays in the telemetry stream, nothing is dropped.
      this.deps.metrics.deadLetterRefusals.inc();
      this.deps.metrics.engineErrors.inc({ engine: 'nats', operation: 'dead_letter' });
      this.deps.log.error({ err: publishErr, subject: m.subject }, 'the dead-letter stream refused a message; it stays unacknowledged and will be redelivered');
      return false;
    }
  }

  private async giveBack(m: WorkMessage, err: unknown): Promise<void> {
    const deliveries = m.info.redeliveryCount;
    const failure = failureOf(err);
    this.deps.metrics.writeFailures.inc({ class: failure.class, reason: failure.reason });
    if (failure.class === 'transient') this.outage ??= { since: (this.deps.now ?? Date.now)(), reason: failure.reason };
    const decision = giveBackDecision(err, deliveries, this.policy);
    if (decision.action === 'dead-letter') {
      if (await this.deadLetter(m, err, failure.reason)) return;
    } else {
      this.deps.log.warn({ err, subject: m.subject, deliveries, class: failure.class, reason: failure.reason, retryInMs: decision.delayMs }, 'unable to write a telemetry message; it will be redelivered');
    }
    m.nak(decision.action === 'retry' ? decision.delayMs : nakDelayMs(deliveries, this.policy.retryDelayMs));
  }
}
