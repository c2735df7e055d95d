import fs from 'node:fs';
import {
  Events,
  connect,
  credsAuthenticator,
  nkeyAuthenticator,
  type ConnectionOptions,
  type JetStreamClient,
  type JetStreamManager,
  type NatsConnection,
} from 'nats';
import type { Logger } from '../observability/logger';

/** How the client proves who it is: one of the four ways nats-server takes. */
export type NatsAuth =
  | { user: string; password: string }
  | { token: string }
  /** A file holding an NKey seed (`SU…`). */
  | { nkeySeedFile: string }
  /** A `.creds` file (a user JWT and its seed). */
  | { credsFile: string };

/** TLS to the server: its CA (else the system's), and a client certificate for mutual TLS. */
export interface NatsTls {
  caFile?: string;
  certFile?: string;
  keyFile?: string;
}

export interface NatsClientConfig {
  /** One server URL or several, comma-separated, without credentials (they go in `auth`). */
  url: string;
  /** Shown in the server's connection list. */
  name: string;
  auth?: NatsAuth;
  tls?: NatsTls;
  /**
   * The subjects the answers to this client's requests come back on
   * (`<inboxPrefix>.<random>`): JetStream API answers, bucket reads, pulled
   * messages. A role of its own per process lets each NATS user subscribe to
   * its own answers only (deploy/nats/nettel.conf); unset: `_INBOX`.
   */
  inboxPrefix?: string;
}

/** The nats.js options that carry the configured credentials and TLS settings. */
export function natsAccessOptions(config: Pick<NatsClientConfig, 'auth' | 'tls'>): Pick<ConnectionOptions, 'user' | 'pass' | 'token' | 'authenticator' | 'tls'> {
  const auth = config.auth;
  const tls = config.tls ? { tls: { ...config.tls } } : {};
  if (!auth) return tls;
  if ('user' in auth) return { ...tls, user: auth.user, pass: auth.password };
  if ('token' in auth) return { ...tls, token: auth.token };
  // Functions, not bytes: nats.js calls them at each (re)connection, so a rotated file is read again.
  // A seed is one line (its newline trimmed); a creds file is read whole, its parser needs each block's last newline.
  if ('nkeySeedFile' in auth) return { ...tls, authenticator: nkeyAuthenticator(() => new TextEncoder().encode(fs.readFileSync(auth.nkeySeedFile, 'utf8').trim())) };
  return { ...tls, authenticator: credsAuthenticator(() => new Uint8Array(fs.readFileSync(auth.credsFile))) };
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
      ...(this.config.inboxPrefix ? { inboxPrefix: this.config.inboxPrefix } : {}),
      ...natsAccessOptions(this.config),
    }).catch((err: unknown) => {
      throw new Error(`unable to connect to nats at ${this.config.url}: ${(err as Error).message}`, { cause: err });
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
