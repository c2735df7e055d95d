import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { localNatsServer, localTemporalServer } from '../../engines/engines';
import { localGobgpServer } from '../../engines/gobgp';
import type { LocalProcess } from '../../engines/local-process';
import { EngineSupervisor } from '../../engines/supervisor';
import type { HealthProbe } from '../../api/deps';
import type { Logger } from '../../observability/logger';
import type { Registry } from '../../observability/metrics';
import type { NatsAuth } from '../../streams/nats-client';
import type { Component } from '../component';
import type { Config } from '../config';
import { secretInDataFolder } from '../data-folder-secret';

/** Where the engines are: configured addresses, or the local ones this process starts. */
export interface EngineAddresses {
  natsUrl: string;
  /** The configured credentials, or the embedded nats-server's generated ones. */
  natsAuth?: NatsAuth;
  temporalAddress: string;
  /** gobgpd's API: the operator's (with its TLS), the embedded one, or none (BGP_SPEAKER_ADDRESS=off). */
  bgpSpeaker?: { address: string; tls?: { caFile: string } };
}

/** The user the embedded nats-server takes (every role of the process connects as it). */
export const embeddedNatsUser = 'nettel';

/**
 * The embedded nats-server's password: generated once, kept in the data
 * folder (mode 0600) beside the admin key, the same on every restart.
 */
export function embeddedNatsPassword(dataDir: string): string {
  return secretInDataFolder(dataDir, 'nats-password', () => randomBytes(32).toString('base64url')).value;
}

/**
 * The embedded default: a local nats-server, Temporal dev server and gobgpd
 * (the BGP speaker), each only when no address points the stack at a running
 * one, each supervised (restarted when it dies) and reported by /healthz as
 * a loop of this process. (ClickHouse is chDB in-process, or the configured
 * server.)
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
  let natsAuth = config.nats.auth;
  if (!natsUrl) {
    const { embeddedPort: port, server, embeddedMaxFileStoreBytes: maxFileStoreBytes } = config.nats;
    // Loopback is not a boundary: any local user or process could otherwise read and write every workspace's telemetry.
    const auth = { user: embeddedNatsUser, password: embeddedNatsPassword(config.dataDir) };
    nats = supervise(localNatsServer({ dir: dir('nats'), port, portSettings: [{ port, setting: 'EMBEDDED_NATS_PORT' }], binPath: config.binPath, toolsDir: config.toolsDir, server, maxFileStoreBytes, auth }, log));
    natsUrl = `nats://127.0.0.1:${config.nats.embeddedPort}`;
    natsAuth = auth;
  }
  let temporalAddress = config.temporal.address;
  if (!temporalAddress) {
    const { embeddedPort: port, embeddedUiPort: uiPort, cli } = config.temporal;
    const portSettings = [{ port, setting: 'EMBEDDED_TEMPORAL_PORT' }, ...(uiPort ? [{ port: uiPort, setting: 'EMBEDDED_TEMPORAL_UI_PORT' }] : [])];
    supervise(localTemporalServer({ dir: dir('temporal'), port, uiPort, portSettings, binPath: config.binPath, cli, toolsDir: config.toolsDir }, log));
    temporalAddress = `127.0.0.1:${port}`;
  }
  const speaker = bgpSpeaker(config, (engine) => supervise(engine), log);
  const probes = supervised.map((s) => ({ name: `engine:${s.name}`, probe: () => s.probe() }));
  return { components: supervised, probes, addresses: { natsUrl, natsAuth, temporalAddress, bgpSpeaker: speaker }, nats };
}

/** The speaker's API address; the embedded gobgpd is started for it unless one is configured (or none wanted). */
function bgpSpeaker(config: Config, supervise: (engine: LocalProcess) => EngineSupervisor, log: Logger): EngineAddresses['bgpSpeaker'] {
  const { speaker, embeddedApiPort: apiPort, embeddedBgpPort: bgpPort, asn, routerId, gobgpd } = config.bgp;
  // Only the role that reconciles mitigations talks to the speaker: an api or collector process starts none (nor owns one).
  if (speaker.kind === 'off' || !config.roles.includes('temporal-worker')) return undefined;
  if (speaker.kind === 'remote') return { address: speaker.address, tls: 'tls' in speaker ? speaker.tls : undefined };
  const portSettings = [
    { port: apiPort, setting: 'EMBEDDED_GOBGP_API_PORT' },
    { port: bgpPort, setting: 'EMBEDDED_GOBGP_BGP_PORT' },
  ];
  supervise(localGobgpServer({ dir: path.join(config.dataDir, 'gobgp'), apiPort, bgpPort, asn, routerId, binPath: config.binPath, toolsDir: config.toolsDir, server: gobgpd, portSettings }, log));
  return { address: `127.0.0.1:${apiPort}` };
}

