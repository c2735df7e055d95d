import type { DetectionRulesSource } from '../../application/detection-rules-service';
import { readTelemetryHeaders } from '../../core/telemetry-headers';
import type { Logger } from '../../observability/logger';
import type { Registry } from '../../observability/metrics';
import { consumerLagMetrics } from '../../streams/consumer-lag';
import type { DetectionFeed } from '../../streams/detection-feed';
import type { NatsClient } from '../../streams/nats-client';
import { defaultTopology, laneConsumer, lanes, type Lane, type TopologyConfig } from '../../streams/topology';
import { BatchWriter } from './batch-writer';
import { Batcher } from './batcher';
import { ConsumeLoop, defaultReopenBackoff } from '../consume/consume-loop';
import { JetStreamDeadLetters } from './dead-letter';
import { BatchHandler, type RestOfBatch } from './give-back';
import { JetStreamSource } from './jetstream-source';
import { streamWorkerMetrics } from './stream-worker-metrics';
import type { IncidentCorrelation, TelemetryWrites, WorkMessage } from './stream-worker-ports';

export interface StreamWorkerConfig {
  prefix: string;
  /** Most messages taken in one pull; each message is one accepted request. */
  maxMessages: number;
  /** Longest a message waits for its batch to fill: the flush interval under light load. */
  maxWaitMs: number;
  /** A batch whose messages reach this many bytes is written at once (bounds one insert's memory). */
  maxBatchBytes: number;
  /** Delay before a failed message is offered again; doubles with each delivery, up to 30 s. */
  retryDelayMs: number;
  /** Deliveries after which a message ClickHouse keeps refusing goes to the dead-letter stream. */
  maxDeliveries: number;
  /** The consumer's ack wait: messages a worker holds are kept alive well within it. */
  ackWaitMs: number;
}

/** The longest a signal waits for its batch to fill, whatever WORKER_MAX_WAIT_MS says. */
const signalsMaxWaitMs = 50;

export const defaultStreamWorkerConfig = (prefix: string): StreamWorkerConfig => ({
  prefix,
  maxMessages: 256,
  maxWaitMs: 200,
  maxBatchBytes: 32 * 1024 ** 2,
  retryDelayMs: 1000,
  maxDeliveries: 10,
  ackWaitMs: defaultTopology(prefix).ackWaitMs,
});

export interface StreamWorkerDeps {
  nats: NatsClient;
  store: TelemetryWrites;
  correlator: IncidentCorrelation;
  registry: Registry;
  log: Logger;
  /** Each workspace's detection rules (application/detection-rules-service); the defaults when absent. */
  rules?: DetectionRulesSource;
  /** The topology the consumer is recreated from; defaults to the default one with this worker's ack wait. */
  topology?: Pick<TopologyConfig, 'prefix' | 'ackWaitMs' | 'maxAckPending'>;
  /** Where written flow messages are copied for the rate detectors (streams/detection-feed.ts); none: no copy. */
  detectionFeed?: Pick<DetectionFeed, 'copy'>;
}

/**
 * Pulls accepted telemetry from the shared durable consumer, writes it to
 * ClickHouse, runs the detectors and the correlator, and only then
 * acknowledges. A crash between the write and the ack redelivers the
 * messages; their rows are looked up by event id and not written twice.
 *
 * The parts, per lane (bulk telemetry; correlation signals on their own
 * consumer, so a flow backlog never holds a fresh signal back): a consume
 * loop that keeps the pull open until stop(), a batcher that flushes on size
 * or time, a handler that retries and gives back failed messages; and one
 * writer that does the writes.
 */
export class StreamWorker {
  private readonly writer: BatchWriter;
  private readonly detectionFeed?: Pick<DetectionFeed, 'copy'>;
  private readonly lanes: Array<{ lane: Lane; loop: ConsumeLoop<WorkMessage>; handler: BatchHandler }>;

  constructor(
    config: StreamWorkerConfig,
    deps: StreamWorkerDeps,
  ) {
    const metrics = streamWorkerMetrics(deps.registry);
    this.detectionFeed = deps.detectionFeed;
    const topology = deps.topology ?? { ...defaultTopology(config.prefix), ackWaitMs: config.ackWaitMs };
    const sources = lanes.map((lane) => new JetStreamSource({ topology, maxMessages: config.maxMessages, lane }, { nats: deps.nats, log: deps.log }));
    this.writer = new BatchWriter({
      store: deps.store,
      correlator: deps.correlator,
      metrics,
      log: deps.log,
      rules: deps.rules,
      mayHaveACopy: (m) => sources.some((source) => source.mayHaveBeenDelivered(m)),
    });
    const deadLetters = new JetStreamDeadLetters(deps.nats, config.prefix);
    this.lanes = lanes.map((lane, i) => {
      const handler = new BatchHandler(config, { write: (batch) => this.write(batch), process: (batch, opts) => this.process(batch, opts), deadLetters, metrics, log: deps.log });
      // Signals wait less for their batch to fill: they are few, and an incident should open at once.
      const maxWaitMs = lane === 'signals' ? Math.min(config.maxWaitMs, signalsMaxWaitMs) : config.maxWaitMs;
      const batcher = new Batcher<WorkMessage>(
        { maxMessages: config.maxMessages, maxBytes: config.maxBatchBytes, maxWaitMs, keepAliveMs: Math.max(500, Math.floor(config.ackWaitMs / 3)) },
        (batch, written) => handler.handle(batch, written),
        (err, batch) => deps.log.error({ err, messages: batch.length, lane }, 'unable to handle a telemetry batch; JetStream will redeliver it'),
      );
      const consumer = laneConsumer(config.prefix, lane).name;
      const loop = new ConsumeLoop(defaultReopenBackoff, { source: sources[i]!, batches: batcher, restarts: metrics.consumeRestarts, consumer, log: deps.log });
      return { lane, loop, handler };
    });
    consumerLagMetrics(deps.registry, { prefix: config.prefix, jsm: () => deps.nats.jsm });
  }

  async start(): Promise<void> {
    await Promise.all(this.lanes.map((l) => l.loop.start()));
  }

  /**
   * For /healthz: resolves while both lanes consume and write; rejects
   * between a failure and a successful re-open, and while writes fail for a
   * transient reason (they are retried until one succeeds).
   */
  async probe(): Promise<{ detail: string }> {
    const details: string[] = [];
    for (const { lane, loop, handler } of this.lanes) {
      const consuming = await loop.probe();
      const outage = handler.failingSince;
      if (outage) throw new Error(`${lane}: writes failing since ${new Date(outage.since).toISOString()} (${outage.reason}); retrying`);
      details.push(`${lane}: ${consuming.detail}`);
    }
    return { detail: details.join('; ') };
  }

  /** Whether JetStream lets this worker consume (ClickHouse aside): for the embedded nats-server's liveness. */
  async canConsume(): Promise<void> {
    await Promise.all(this.lanes.map((l) => l.loop.canConsume()));
  }

  async stop(): Promise<void> {
    await Promise.all(this.lanes.map((l) => l.loop.stop()));
  }

  /**
   * Writes, detects and correlates one pulled batch. `retry` treats every
   * message as redelivered (its rows may be stored already). Exposed for
   * tests that drive a batch directly.
   */
  async process(batch: WorkMessage[], opts: { retry?: boolean } = {}): Promise<void> {
    const rest = await this.write(batch, opts);
    await rest();
  }

  /**
   * Stores the batch's rows; resolves to the rest before its ack: the
   * signals and incidents of the stored rows, and the rate detectors' copy
   * (written, not yet acknowledged), side by side. A failed rest fails the
   * batch, whose retry finds its rows stored (not written twice), and
   * correlates and copies again: both are idempotent (the copy by its
   * message id).
   */
  async write(batch: WorkMessage[], opts: { retry?: boolean } = {}): Promise<RestOfBatch> {
    const correlate = await this.writer.write(batch, opts);
    return async () => {
      const outcomes = await Promise.allSettled([correlate(), this.detectionFeed?.copy(flowMessagesOf(batch))]);
      for (const outcome of outcomes) if (outcome.status === 'rejected') throw outcome.reason;
    };
  }
}

/** The batch's flow messages, each with its workspace, as the detection feed takes them. */
function flowMessagesOf(batch: WorkMessage[]): Array<{ orgId: string; message: WorkMessage }> {
  const out: Array<{ orgId: string; message: WorkMessage }> = [];
  for (const message of batch) {
    const { kind, org } = readTelemetryHeaders(message.headers);
    if (kind === 'flow') out.push({ orgId: org, message });
  }
  return out;
}
