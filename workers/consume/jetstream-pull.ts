import { ConsumerEvents, Events, type ConsumerMessages, type JsMsg } from 'nats';
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
 * test/integration/cluster-kills.test.ts); at 2 s, 4 to 6 s. A busy event
 * loop cannot fake the silence: the messages it reads between two checks
 * count as heard.
 */
export const pullHeartbeatMs = 2_000;

export interface JetStreamPullConfig {
  stream: string;
  consumer: string;
  /** Most messages one pull asks for. */
  maxMessages: number;
}

/**
 * Opens pulls of one durable consumer, for the consume loop: each open first
 * runs `prepare` (which makes sure the consumer exists), then pulls with
 * `consume()`, told to fail rather than wait when the consumer or stream is
 * gone. A pull is also ended on purpose when the connection drops or
 * heartbeats stop, so the loop notices at once that it cannot consume. Every
 * failure is a ConsumeInterrupted whose reason is a metric label.
 */
export class JetStreamPull {
  private watchingConnection = false;
  private interruptCurrent?: (reason: string) => void;

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
      const messages = await consumer.consume({ max_messages: this.config.maxMessages, idle_heartbeat: pullHeartbeatMs, abort_on_missing_resource: true });
      return this.watch(messages);
    } catch (err) {
      if (err instanceof ConsumeInterrupted) throw err;
      throw new ConsumeInterrupted(interruptionReason(err), { cause: err });
    }
  }

  /** Ends the pull with a reason when the connection drops or the server stops answering it. */
  private watch(messages: ConsumerMessages): OpenedConsumer<JsMsg> {
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
