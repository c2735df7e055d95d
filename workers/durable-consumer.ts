import type { JsMsg } from 'nats';
import { backoffDelayMs } from '../core/backoff';
import type { Logger } from '../observability/logger';
import type { Counter } from 'prom-client';
import type { NatsClient } from '../streams/nats-client';
import { outboxConsumer } from '../streams/outbox';
import { putConsumer } from '../streams/put-stream';
import { defaultReopenBackoff } from './consume-loop';

export interface DurableConsumerConfig {
  stream: string;
  durable: string;
  ackWaitMs: number;
  /** Messages handled at once. */
  concurrency: number;
}

/**
 * A loop over a durable pull consumer with bounded concurrency, for the
 * outbox's consumers: `handle` acknowledges or NAKs each message itself; a
 * handler that throws has its message offered again after a second. When
 * the pull fails (a restarted server, a deleted consumer) the consumer is
 * made again and the pull re-opened, after 250 ms doubling to 5 s.
 */
export class DurableConsumer {
  private running = false;
  private loop?: Promise<void>;
  private stopPull?: () => void;
  private readonly inFlight = new Set<Promise<void>>();

  constructor(
    private readonly config: DurableConsumerConfig,
    private readonly deps: { nats: NatsClient; log: Logger; handle: (m: JsMsg) => Promise<void>; restarts: Counter<'consumer'> },
  ) {}

  async start(): Promise<void> {
    await this.ensureConsumer();
    this.running = true;
    this.loop = this.run();
  }

  async stop(): Promise<void> {
    this.running = false;
    this.stopPull?.();
    await this.loop;
    await Promise.allSettled([...this.inFlight]);
  }

  private async ensureConsumer(): Promise<void> {
    await putConsumer(this.deps.nats.jsm, this.config.stream, outboxConsumer(this.config.durable, this.config.ackWaitMs));
  }

  private async run(): Promise<void> {
    let failures = 0;
    while (this.running) {
      try {
        await this.pull();
        failures = 0;
      } catch (err) {
        if (!this.running) break;
        this.deps.restarts.inc({ consumer: this.config.durable });
        this.deps.log.warn({ err, consumer: this.config.durable }, 'outbox consumer interrupted; reopening');
        failures += 1;
        await new Promise((r) => setTimeout(r, backoffDelayMs(defaultReopenBackoff, failures)));
        await this.ensureConsumer().catch(() => undefined);
      }
    }
  }

  private async pull(): Promise<void> {
    const consumer = await this.deps.nats.js().consumers.get(this.config.stream, this.config.durable);
    const messages = await consumer.consume({ max_messages: this.config.concurrency });
    this.stopPull = () => messages.stop();
    if (!this.running) messages.stop();
    for await (const m of messages) {
      while (this.inFlight.size >= this.config.concurrency) await Promise.race(this.inFlight);
      const work: Promise<void> = this.deps
        .handle(m)
        .catch((err: unknown) => {
          this.deps.log.error({ err, consumer: this.config.durable, seq: m.seq }, 'unable to handle an outbox message; it is offered again');
          m.nak(1_000);
        })
        .finally(() => this.inFlight.delete(work));
      this.inFlight.add(work);
    }
  }
}
