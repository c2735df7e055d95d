import path from 'node:path';
import { localNatsServer, localTemporalServer } from '../../engines/engines';
import type { LocalProcess } from '../../engines/local-process';
import { EngineSupervisor } from '../../engines/supervisor';
import type { HealthProbe } from '../../api/deps';
import type { Logger } from '../../observability/logger';
import type { Registry } from '../../observability/metrics';
import type { Component } from '../component';
import type { Config } from '../config';

/** Where the engines are: configured addresses, or the local ones this process starts. */
export interface EngineAddresses {
  natsUrl: string;
  temporalAddress: string;
}

/**
 * The embedded default: a local nats-server and Temporal dev server, each
 * only when no address points the stack at a running one, each supervised
 * (restarted when it dies) and reported by /healthz as a loop of this
 * process. (ClickHouse is chDB in-process, or the configured server.)
 */
export function localEngines(
  config: Config,
  log: Logger,
  registry: Registry,
): { components: Component[]; probes: HealthProbe[]; addresses: EngineAddresses; nats?: EngineSupervisor } {
  const supervised: EngineSupervisor[] = [];
  const dir = (name: string) => path.join(config.dataDir, name);
  const supervise = (engine: LocalProcess) => {
    const supervisor = new EngineSupervisor(engine, config.supervision, { log, registry });
    supervised.push(supervisor);
    return supervisor;
  };
  let nats: EngineSupervisor | undefined;
  let natsUrl = config.nats.url;
  if (!natsUrl) {
    const { embeddedPort: port, server, embeddedMaxFileStoreBytes: maxFileStoreBytes } = config.nats;
    nats = supervise(localNatsServer({ dir: dir('nats'), port, binPath: config.binPath, toolsDir: config.toolsDir, server, maxFileStoreBytes }, log));
    natsUrl = `nats://127.0.0.1:${config.nats.embeddedPort}`;
  }
  let temporalAddress = config.temporal.address;
  if (!temporalAddress) {
    const { embeddedPort: port, embeddedUiPort: uiPort, cli } = config.temporal;
    supervise(localTemporalServer({ dir: dir('temporal'), port, uiPort, binPath: config.binPath, cli, toolsDir: config.toolsDir }, log));
    temporalAddress = `127.0.0.1:${port}`;
  }
  const probes = supervised.map((s) => ({ name: `engine:${s.name}`, probe: () => s.probe() }));
  return { components: supervised, probes, addresses: { natsUrl, temporalAddress }, nats };
}

