import { Events, connect, type JetStreamClient, type JetStreamManager, type NatsConnection } from 'nats';
import type { Logger } from '../observability/logger';

export interface NatsClientConfig {
  url: string;
  /** Shown in the server's connection list. */
  name: string;
}

/** The process's one NATS connection, with its JetStream handles. */
export class NatsClient {
  private connection?: NatsConnection;
  private manager?: JetStreamManager;
  private connected = false;

  constructor(
    private readonly config: NatsClientConfig,
    private readonly log: Logger,
  ) {}

  async start(): Promise<void> {
    this.connection = await connect({
      servers: this.config.url.split(','),
      name: this.config.name,
      maxReconnectAttempts: -1,
      reconnectTimeWait: 500,
    });
    this.manager = await this.connection.jetstreamManager();
    this.connected = true;
    void this.watchStatus(this.connection);
    this.log.info({ url: this.config.url, server: this.connection.info?.version }, 'nats connected');
  }

  private async watchStatus(nc: NatsConnection): Promise<void> {
    for await (const status of nc.status()) {
      if (status.type === Events.Disconnect) this.connected = false;
      if (status.type === Events.Reconnect) this.connected = true;
      if (status.type === Events.Disconnect || status.type === Events.Reconnect || status.type === Events.Error) {
        this.log.warn({ status: status.type, data: status.data }, 'nats connection status');
      }
    }
  }

  async stop(): Promise<void> {
    const nc = this.connection;
    this.connection = undefined;
    if (nc && !nc.isClosed()) await nc.drain();
  }

  /** False while the client is reconnecting: publishing then would only queue in this process. */
  get isConnected(): boolean {
    return this.connected && !!this.connection && !this.connection.isClosed();
  }

  get nc(): NatsConnection {
    if (!this.connection) throw new Error('nats client is not started');
    return this.connection;
  }

  get jsm(): JetStreamManager {
    if (!this.manager) throw new Error('nats client is not started');
    return this.manager;
  }

  js(): JetStreamClient {
    return this.nc.jetstream();
  }

  async probe(): Promise<{ version: string }> {
    const nc = this.nc;
    if (!this.isConnected) throw new Error('not connected');
    await nc.flush();
    const account = await this.jsm.getAccountInfo();
    return { version: `${nc.info?.version ?? 'unknown'} (jetstream streams: ${account.streams})` };
  }
}
