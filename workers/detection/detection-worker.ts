import type { JsMsg } from 'nats';
import type { Logger } from '../../observability/logger';
import type { Registry } from '../../observability/metrics';
import { detectorMaxAckPending, ensureDetectorConsumer } from '../../streams/detection-feed';
import { names } from '../../streams/names';
import type { NatsClient } from '../../streams/nats-client';
import { maxTelemetryMessageBytes } from '../../streams/telemetry-publisher';
import { ConsumeLoop, defaultReopenBackoff } from '../consume/consume-loop';
import { JetStreamPull } from '../consume/jetstream-pull';
import { detectionMetrics, type DetectionMetrics } from './detection-metrics';
import { DetectionSink, type DetectionSinkDeps } from './detection-sink';
import { Pause } from '../consume/pause';

export interface DetectionWorkerConfig {
  prefix: string;
  /** The consumer's ack wait: held messages are kept alive well within it. */
  ackWaitMs: number;
  /** Messages held at most (their windows open): bounds the feed's memory. */
  maxAckPending: number;
  /** Wall time without a message after which the open windows are closed: the detectors' lateness. */
  idleFlushMs: number;
  /** How often a process that does not hold the lock tries to take it. */
  lockRetryMs: number;
}

export const defaultDetectionWorkerConfig = (prefix: string): DetectionWorkerConfig => ({
  prefix,
  ackWaitMs: 30_000,
  maxAckPending: detectorMaxAckPending,
  idleFlushMs: 5_000,
  lockRetryMs: 2_000,
});

/** The lock whose holder alone consumes the detection feed (streams/locks.ts). */
export const detectorLock = 'rate-detectors';

export interface DetectionWorkerDeps extends Omit<DetectionSinkDeps, 'metrics'> {
  nats: NatsClient;
  locks: { tryWithLock<T>(name: string, work: () => Promise<T>): Promise<T | undefined> };
  registry: Registry;
  log: Logger;
}

/**
 * The rate detectors' consumer, in the stream-workers role: every process
 * of the role runs one, and the one that holds the lock `rate-detectors`
 * consumes the detection feed (streams/detection-feed.ts) through the one
 * consume loop, so two processes never split a destination's rates. The
 * others try the lock every `lockRetryMs`: a holder that stops releases it
 * (its held messages offered again at once); one that dies leaves it to
 * expire (the locks' TTL), and its held messages come back after the ack
 * wait, to rebuild the successor's state.
 */
export class DetectionWorker {
  private readonly metrics: DetectionMetrics;
  private running = false;
  private leading?: Promise<void>;
  private readonly pause = new Pause();

  constructor(
    private readonly config: DetectionWorkerConfig,
    private readonly deps: DetectionWorkerDeps,
  ) {
    this.metrics = detectionMetrics(deps.registry);
  }

  start(): Promise<void> {
    this.running = true;
    this.leading = this.contend();
    return Promise.resolve();
  }

  async stop(): Promise<void> {
    this.running = false;
    this.pause.wake();
    await this.leading;
  }

  private async contend(): Promise<void> {
    while (this.running) {
      try {
        await this.deps.locks.tryWithLock(detectorLock, () => this.lead());
      } catch (err) {
        this.metrics.errors.inc({ stage: 'lock' });
        this.deps.log.warn({ err }, 'unable to contend for the rate detectors lock; trying again');
      }
      if (this.running) await this.pause.for(this.config.lockRetryMs);
    }
  }

  /** Consumes the feed until stopped: the lock is held meanwhile. */
  private async lead(): Promise<void> {
    const { prefix, ackWaitMs, maxAckPending } = this.config;
    const nats = this.deps.nats;
    // The bound read at each message: the server's payload limit is known once connected.
    const screen = { subjectPrefix: names(prefix).detectionSubject(''), get maxBytes() { return maxTelemetryMessageBytes(nats.nc); } };
    const sink = new DetectionSink<JsMsg>({ idleFlushMs: this.config.idleFlushMs, screen }, { ...this.deps, metrics: this.metrics });
    const pull = new JetStreamPull(
      { stream: names(prefix).detection, consumer: names(prefix).detector, maxMessages: 256, ackWaitMs },
      { nats: this.deps.nats, prepare: () => ensureDetectorConsumer(this.deps.nats.jsm, prefix, ackWaitMs, maxAckPending) },
    );
    const loop = new ConsumeLoop<JsMsg>(defaultReopenBackoff, { source: pull, batches: sink, restarts: this.metrics.restarts, consumer: names(prefix).detector, log: this.deps.log });
    await loop.start();
    this.metrics.leading.set(1);
    this.deps.log.info({}, 'leading the rate detectors');
    const keepAlive = setInterval(() => sink.keepAlive(), Math.max(500, Math.floor(ackWaitMs / 3)));
    const idle = setInterval(() => void sink.tick(), 250);
    try {
      while (this.running) await this.pause.for(60_000);
    } finally {
      clearInterval(keepAlive);
      clearInterval(idle);
      await loop.stop();
      await sink.release();
      this.metrics.leading.set(0);
    }
  }
}
