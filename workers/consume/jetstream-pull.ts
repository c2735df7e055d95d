import { ConsumerEvents, Events, type Consumer, type ConsumerMessages, type JsMsg } from 'nats';
import type { NatsClient } from '../../streams/nats-client';
import { ConsumeInterrupted, type OpenedConsumer } from './consumer';
import { jsErrors } from '../../streams/names';

/** A label for why a pull failed or could not open, from the error's codes (never its text). */
export function interruptionReason(err: unknown): string {
  const e = err as { code?: string; api_error?: { err_code?: number } } | undefined;
  if (e?.api_error?.err_code === jsErrors.consumerNotFound) return 'consumer_not_found';
  if (e?.api_error?.err_code === jsErrors.streamNotFound) return 'stream_not_found';
  const byCode: Record<string, string> = {
    '409': 'consumer_deleted',
    '503': 'no_responders',
    TIMEOUT: 'timeout',
    CONNECTION_CLOSED: 'connection_closed',
    CONNECTION_DRAINING: 'connection_closed',
  };
  return (e?.code && byCode[e.code]) || 'error';
}

/**
 * How often the server of a waiting pull says it is still there. Only the
 * consumer's leader answers a pull: when it dies (a NATS node killed) the
 * pull hears nothing more, and nats.js reports it after two silent
 * intervals. At its default (half the pull's 30 s expiry) the workers stood
 * still 30 to 45 s after a leader's kill on a 3-node cluster (40 s measured,
 * test/cluster/cluster-kills.test.ts); at 2 s, 4 to 6 s. A busy event
 * loop cannot fake the silence: the messages it reads between two checks
 * count as heard.
 */
export const pullHeartbeatMs = 2_000;

export interface JetStreamPullConfig {
  stream: string;
  consumer: string;
  /** Most messages one pull asks for; at most twice this many wait in the worker's buffer. */
  maxMessages: number;
  /** The consumer's ack wait: the messages waiting in the buffer are kept alive three times within it. */
  ackWaitMs: number;
}

/** How long one pull waits on the server for messages before the next is asked (nats.js's default). */
const pullExpiresMs = 30_000;

/**
 * Opens pulls of one durable consumer, for the consume loop: each open first
 * runs `prepare` (which makes sure the consumer exists), then pulls. A pull
 * is also ended on purpose when the connection drops or heartbeats stop, so
 * the loop notices at once that it cannot consume. Every failure is a
 * ConsumeInterrupted whose reason is a metric label.
 */
export class JetStreamPull {
  private watchingConnection = false;
  private interruptCurrent?: (reason: string) => void;
  /** When each message held now reached this process (forgotten with the message). */
  private readonly arrivals = new WeakMap<object, number>();
  /** The last time the keep-alives may have lapsed: NATS lost, or the event loop stalled past half the ack wait. */
  private lapsedAt = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly config: JetStreamPullConfig,
    private readonly deps: { nats: NatsClient; prepare: () => Promise<void> },
  ) {}

  async open(): Promise<OpenedConsumer<JsMsg>> {
    const { nats } = this.deps;
    if (!nats.isConnected) throw new ConsumeInterrupted('disconnected');
    try {
      // The first open too: the consumer may have been deleted (or recreated by another process) just before.
      await this.deps.prepare();
      const consumer = await nats.js().consumers.get(this.config.stream, this.config.consumer);
      this.watchConnection();
      const pull = new KeptAlivePull(consumer, this.config, {
        arrived: (m) => this.arrivals.set(m, Date.now()),
        stalled: () => (this.lapsedAt = Date.now()),
      });
      this.interruptCurrent = (reason) => pull.fail(new ConsumeInterrupted(reason));
      return pull;
    } catch (err) {
      if (err instanceof ConsumeInterrupted) throw err;
      throw new ConsumeInterrupted(interruptionReason(err), { cause: err });
    }
  }

  /**
   * Whether another worker may have been handed a message this process
   * pulled: kept alive from its arrival, it is redelivered only if the
   * keep-alives lapsed for about the ack wait, which takes a lost connection
   * or an event loop stalled past half of it since the message arrived. Such
   * a message is checked for stored rows before it is written; one held long
   * behind a deep buffer, but kept alive all along, is not.
   */
  mayHaveLapsed(m: object): boolean {
    const at = this.arrivals.get(m);
    return at !== undefined && this.lapsedAt >= at;
  }

  /** One listener for the connection's life: a disconnect ends whichever pull is open. */
  private watchConnection(): void {
    if (this.watchingConnection) return;
    this.watchingConnection = true;
    const status = this.deps.nats.nc.status();
    void (async () => {
      for await (const s of status) {
        if (s.type !== Events.Disconnect) continue;
        this.lapsedAt = Date.now();
        this.interruptCurrent?.('disconnected');
      }
    })();
  }
}

/**
 * Pulls as one-shot requests (nats.js `fetch`), each read at once into a
 * buffer of this process's own, where every message is kept alive from the
 * moment it arrives. nats.js's `consume()` queues the messages it received
 * until the iterator reaches them, unseen and not kept alive: a worker busy
 * with a slow batch let them pass their ack wait there, JetStream handed
 * them to another worker, and both wrote them (two doubled requests in ten
 * kills of a worker with a 5 s ack wait, test/cluster/cluster-kills.test.ts).
 * Here a message is redelivered only when this process died or stalled past
 * the ack wait. The next pull is asked only when the buffer has room for
 * it, so the buffer holds at most two pulls' worth.
 */
class KeptAlivePull implements OpenedConsumer<JsMsg> {
  readonly messages: AsyncIterable<JsMsg>;
  private readonly buffer: JsMsg[] = [];
  private readonly keepAlive: NodeJS.Timeout;
  private current?: ConsumerMessages;
  private ended = false;
  private failure?: ConsumeInterrupted;
  /** Wakes the reader (a message arrived, or the pull ended) or the pump (room in the buffer). */
  private wakeReader?: () => void;
  private wakePump?: () => void;

  constructor(
    private readonly consumer: Consumer,
    private readonly config: JetStreamPullConfig,
    private readonly events: { arrived: (m: JsMsg) => void; stalled: () => void },
  ) {
    const intervalMs = Math.max(500, Math.floor(config.ackWaitMs / 3));
    let lastTick = Date.now();
    this.keepAlive = setInterval(() => {
      // A tick late by half the ack wait: the process stalled, and a keep-alive of any message it holds may have come too late.
      const now = Date.now();
      if (now - lastTick > intervalMs + config.ackWaitMs / 2) events.stalled();
      lastTick = now;
      for (const m of this.buffer) m.working();
    }, intervalMs);
    this.messages = this.read();
    void this.pump();
  }

  stop(): void {
    this.end();
  }

  /** Ends the pull with a reason, which the reader throws once the buffer is read. */
  fail(failure: ConsumeInterrupted): void {
    if (this.ended) return;
    this.failure = failure;
    this.end();
  }

  private end(): void {
    if (this.ended) return;
    this.ended = true;
    clearInterval(this.keepAlive);
    this.current?.stop();
    this.wakeReader?.();
    this.wakePump?.();
  }

  private async pump(): Promise<void> {
    const { maxMessages } = this.config;
    try {
      while (!this.ended) {
        while (!this.ended && this.buffer.length > maxMessages) await new Promise<void>((resolve) => (this.wakePump = resolve));
        if (this.ended) break;
        const fetched = await this.consumer.fetch({ max_messages: maxMessages, expires: pullExpiresMs, idle_heartbeat: pullHeartbeatMs });
        this.current = fetched;
        if (this.ended) fetched.stop();
        void this.watchHeartbeats(fetched);
        for await (const m of fetched) {
          this.events.arrived(m);
          this.buffer.push(m);
          this.wakeReader?.();
        }
        this.current = undefined;
      }
    } catch (err) {
      this.fail(err instanceof ConsumeInterrupted ? err : new ConsumeInterrupted(interruptionReason(err), { cause: err }));
    }
  }

  /** Only the consumer's leader answers a pull: silence means it is gone (pullHeartbeatMs). */
  private async watchHeartbeats(fetched: ConsumerMessages): Promise<void> {
    for await (const s of await fetched.status()) if (s.type === ConsumerEvents.HeartbeatsMissed) this.fail(new ConsumeInterrupted('heartbeats_missed'));
  }

  /** The buffer's messages in order; after the pull ended, none (those left are redelivered after the ack wait), then its failure. */
  private async *read(): AsyncGenerator<JsMsg> {
    while (!this.ended) {
      const m = this.buffer.shift();
      if (m) {
        if (this.buffer.length <= this.config.maxMessages) this.wakePump?.();
        yield m;
      } else await new Promise<void>((resolve) => (this.wakeReader = resolve));
    }
    if (this.failure) throw this.failure;
  }
}
