import fs from 'node:fs';
import { Client, Connection, type TLSConfig } from '@temporalio/client';
import type { Logger } from '../observability/logger';

/** TLS to the Temporal frontend: its CA (else the system's), a client certificate for mutual TLS, the name its certificate carries. */
export interface TemporalTls {
  caFile?: string;
  certFile?: string;
  keyFile?: string;
  serverName?: string;
}

/** Where Temporal is and how to prove who this process is: mutual TLS, or an API key (always over TLS). */
export interface TemporalAccess {
  address: string;
  tls?: TemporalTls;
  apiKey?: string;
}

export interface TemporalClientConfig extends TemporalAccess {
  namespace: string;
}

/** The options both SDK connections take (the client's Connection, the worker's NativeConnection), files read. */
export function temporalConnectionOptions(access: TemporalAccess): { address: string; tls?: TLSConfig; apiKey?: string } {
  const { address, tls, apiKey } = access;
  if (!tls && !apiKey) return { address };
  const read = (file: string | undefined) => (file ? fs.readFileSync(file) : undefined);
  const crt = read(tls?.certFile);
  const key = read(tls?.keyFile);
  const config: TLSConfig = {
    ...(tls?.serverName ? { serverNameOverride: tls.serverName } : {}),
    ...(tls?.caFile ? { serverRootCACertificate: read(tls.caFile) } : {}),
    ...(crt && key ? { clientCertPair: { crt, key } } : {}),
  };
  return { address, tls: config, ...(apiKey ? { apiKey } : {}) };
}

/** The process's connection to Temporal, used to start and signal workflows. */
export class TemporalClient {
  private connection?: Connection;
  private workflowClient?: Client;

  constructor(
    private readonly config: TemporalClientConfig,
    private readonly log: Logger,
  ) {}

  async start(): Promise<void> {
    this.connection = await Connection.connect(temporalConnectionOptions(this.config));
    this.workflowClient = new Client({ connection: this.connection, namespace: this.config.namespace });
    this.log.info({ address: this.config.address, namespace: this.config.namespace }, 'temporal connected');
  }

  async stop(): Promise<void> {
    await this.connection?.close();
    this.connection = undefined;
  }

  get client(): Client {
    if (!this.workflowClient) throw new Error('temporal client is not started');
    return this.workflowClient;
  }

  get rawConnection(): Connection {
    if (!this.connection) throw new Error('temporal client is not started');
    return this.connection;
  }

  async probe(): Promise<{ version: string }> {
    const info = await this.rawConnection.workflowService.getSystemInfo({});
    return { version: info.serverVersion ?? 'unknown' };
  }
}
