import path from 'node:path';
import { localNatsServer, localTemporalServer } from '../../engines/engines';
import type { Logger } from '../../observability/logger';
import type { Component } from '../component';
import type { Config } from '../config';

/** Where the engines are: configured addresses, or the local ones this process starts. */
export interface EngineAddresses {
  natsUrl: string;
  temporalAddress: string;
}

/**
 * The embedded default: a local nats-server and Temporal dev server, each
 * only when no address points the stack at a running one. (ClickHouse is
 * chDB in-process, or the configured server.)
 */
export function localEngines(config: Config, log: Logger): { components: Component[]; addresses: EngineAddresses } {
  const components: Component[] = [];
  const dir = (name: string) => path.join(config.dataDir, name);
  let natsUrl = config.nats.url;
  if (!natsUrl) {
    components.push(localNatsServer({ dir: dir('nats'), port: config.nats.embeddedPort, binPath: config.binPath }, log));
    natsUrl = `nats://127.0.0.1:${config.nats.embeddedPort}`;
  }
  let temporalAddress = config.temporal.address;
  if (!temporalAddress) {
    const { embeddedPort: port, embeddedUiPort: uiPort, cli } = config.temporal;
    components.push(localTemporalServer({ dir: dir('temporal'), port, uiPort, binPath: config.binPath, cli, toolsDir: config.toolsDir }, log));
    temporalAddress = `127.0.0.1:${port}`;
  }
  return { components, addresses: { natsUrl, temporalAddress } };
}
