import { Client, Connection } from '@temporalio/client';
import type { Logger } from '../observability/logger';

export interface TemporalClientConfig {
  address: string;
  namespace: string;
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
    this.connection = await Connection.connect({ address: this.config.address });
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
