import { ConsumerEvents, Events, type ConsumerMessages, type JsMsg } from 'nats';
import type { Logger } from '../observability/logger';
import type { NatsClient } from '../streams/nats-client';
import { jsErrors } from '../streams/put-stream';
import { ensureWritersConsumer, laneConsumer, names, type Lane, type TopologyConfig } from '../streams/topology';
import { ConsumeInterrupted, type MessageSource, type OpenedConsumer, type WorkMessage } from './stream-worker-ports';

export interface JetStreamSourceConfig {
  /** The writers' consumer as the topology defines it: recreated from this when it was deleted. */
  topology: Pick<TopologyConfig, 'prefix' | 'ackWaitMs' | 'maxAckPending'>;
  /** Most messages one pull asks for. */
  maxMessages: number;
  /** The lane's consumer this source pulls from (streams/topology.ts): bulk telemetry unless told. */
  lane?: Lane;
}


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
 * The shared durable consumer as a message source. Each open pulls with
 * `consume()`, told to fail rather than wait when the consumer or stream is
 * gone; a pull is also ended on purpose when the connection drops or
 * heartbeats stop, so the worker notices at once that it cannot consume.
 *
 * Every open makes sure the consumer exists (recreating it
 * from the topology) and records the stream's last sequence. A recreated
 * consumer, or a server restarted without its delivery state, hands out again
 * messages some worker already wrote without marking them redelivered: every
 * message up to that sequence is checked for stored rows before it is written.
 */
export class JetStreamSource implements MessageSource {
  private checkUpToSeq = 0;
  private watchingConnection = false;
  private interruptCurrent?: (reason: string) => void;

  constructor(
    private readonly config: JetStreamSourceConfig,
    private readonly deps: { nats: NatsClient; log: Logger },
  ) {}

  private get consumerName(): string {
    return laneConsumer(this.config.topology.prefix, this.config.lane ?? 'bulk').name;
  }

  mayHaveBeenDelivered(message: WorkMessage): boolean {
    return message.info.streamSequence <= this.checkUpToSeq;
  }

  async open(): Promise<OpenedConsumer> {
    const { nats } = this.deps;
    if (!nats.isConnected) throw new ConsumeInterrupted('disconnected');
    const n = names(this.config.topology.prefix);
    try {
      // The first open too: the consumer may have been recreated (by this start, or another process) just before.
      await this.prepareOpen();
      const consumer = await nats.js().consumers.get(n.stream, this.consumerName);
      const messages = await consumer.consume({ max_messages: this.config.maxMessages, abort_on_missing_resource: true });
      return this.watch(messages);
    } catch (err) {
      if (err instanceof ConsumeInterrupted) throw err;
      throw new ConsumeInterrupted(interruptionReason(err), { cause: err });
    }
  }

  private async prepareOpen(): Promise<void> {
    const { jsm } = this.deps.nats;
    const n = names(this.config.topology.prefix);
    if (await ensureWritersConsumer(jsm, this.config.topology, this.config.lane)) {
      this.deps.log.warn({ stream: n.stream, consumer: this.consumerName }, 'recreated a writers consumer');
    }
    const stream = await jsm.streams.info(n.stream);
    this.checkUpToSeq = Math.max(this.checkUpToSeq, stream.state.last_seq);
  }

  /** Ends the pull with a reason when the connection drops or the server stops answering it. */
  private watch(messages: ConsumerMessages): OpenedConsumer {
    let interruption: ConsumeInterrupted | undefined;
    const interrupt = (reason: string) => {
      if (interruption) return;
      interruption = new ConsumeInterrupted(reason);
      messages.stop(interruption);
    };
    this.watchConnection();
    this.interruptCurrent = interrupt;
    void messages.status().then(async (events) => {
      for await (const s of events) if (s.type === ConsumerEvents.HeartbeatsMissed) interrupt('heartbeats_missed');
    });
    async function* iterate(): AsyncGenerator<JsMsg> {
      try {
        for await (const m of messages) yield m;
      } catch (err) {
        throw interruption ?? new ConsumeInterrupted(interruptionReason(err), { cause: err });
      }
    }
    return { messages: iterate(), stop: () => messages.stop() };
  }

  /** One listener for the connection's life: a disconnect ends whichever pull is open. */
  private watchConnection(): void {
    if (this.watchingConnection) return;
    this.watchingConnection = true;
    const status = this.deps.nats.nc.status();
    void (async () => {
      for await (const s of status) if (s.type === Events.Disconnect) this.interruptCurrent?.('disconnected');
    })();
  }
}
