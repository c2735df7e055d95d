import type { RouteInfo } from '../api/app';
import type { HealthProbe } from '../api/deps';
import type { Logger } from '../observability/logger';
import { createRegistry, type Registry } from '../observability/metrics';
import type { ClickHouse } from '../storage/clickhouse';
import type { NatsClient } from '../streams/nats-client';
import type { TemporalClient } from '../temporal/temporal-client';
import type { Collector } from '../workers/collector/collector';
import type { SnmpPoller } from '../workers/enrichment/snmp-poller';
import type { RollupFolder } from '../workers/telemetry/rollup-folder';
import type { TemporalWorker } from '../workers/governance/temporal-worker';
import type { StreamWorker } from '../workers/telemetry/stream-worker';
import type { EngineSupervisor } from '../engines/supervisor';
import { Lifecycle, type Component } from './component';
import type { Config } from './config';
import { sharedSecretOf } from './data-folder-secret';
import { decisionSigningKeyOf } from './decision-signing-key';
import { sharedAdapters, type Adapters } from './roles/adapters';
import { mitigationRole } from './roles/mitigation';
import { apiRole } from './roles/api';
import { collectorRole } from './roles/collector';
import { localEngines } from './roles/engines';
import { JetStreamWriteProbe } from '../streams/jetstream-write-probe';
import { streamWorkersRole } from './roles/stream-workers';
import { temporalWorkerRole } from './roles/temporal-worker';

/** A started process: its adapters, what its roles expose, and how to stop it all. */
export interface Stack {
  config: Config;
  clickhouse: ClickHouse;
  nats: NatsClient;
  temporal: TemporalClient;
  registry: Registry;
  /** The connections the roles share (for tests and tools that wire a role of their own). */
  adapters: Adapters;
  /** The routes this process serves, when it runs the api role. */
  routes?: RouteInfo[];
  /** The Temporal worker, when this process runs the temporal-worker role. */
  temporalWorker?: TemporalWorker;
  /** The flow collector, when this process runs the collector role. */
  collector?: Collector;
  /** The SNMP poller of interface names, when this process runs the stream-workers role. */
  snmpPoller?: SnmpPoller;
  /** The fold of the 5-minute and hourly flow rollups, when this process runs the stream-workers role. */
  rollupFolder?: RollupFolder;
  /** The URL the API listens on, when this process runs the api role. */
  url?: string;
  stop(): Promise<void>;
}

/**
 * The keys the roles of a deployment share, resolved before anything starts (generated on the embedded
 * default, required with a ClickHouse server by the roles that use them: a start without one fails naming it).
 */
export function withSharedSecrets(given: Config): Config {
  return {
    ...given,
    // The api signs replay decisions' tokens, the temporal-worker checks them.
    decisions: { ...given.decisions, signingKey: decisionSigningKeyOf(given) },
    // Audit entries are chained with a key the database does not hold: the api and the Temporal worker append them.
    audit: { chainKey: sharedSecretOf(given, { setting: 'AUDIT_CHAIN_KEY', given: given.audit.chainKey, usedBy: ['api', 'stream-workers', 'temporal-worker'], file: 'audit-chain-key' }) },
    // Webhook signing secrets are never stored unsealed: the api seals them, the stream workers' deliverer opens them.
    webhooks: {
      ...given.webhooks,
      secretsKey: sharedSecretOf(given, { setting: 'WEBHOOK_SECRETS_KEY', given: given.webhooks.secretsKey, usedBy: ['api', 'stream-workers'], file: 'webhook-secrets-key' }),
    },
  };
}

/**
 * The embedded nats-server is alive only while JetStream stores and serves: a
 * full disk leaves it up but refusing every write to the streams and
 * consumers that hit it.
 */
function watchNatsLiveness(nats: EngineSupervisor, config: Config, adapters: Adapters, worker: StreamWorker | undefined): void {
  const writeProbe = new JetStreamWriteProbe({ nats: adapters.nats, prefix: config.nats.prefix, timeoutMs: 5_000, telemetry: adapters.telemetryWrites });
  const check = async () => {
    const verdict = await writeProbe.check();
    if (verdict === 'live') await worker?.canConsume();
    return verdict;
  };
  nats.watchLiveness({ check, intervalMs: 2_000, afterRestart: () => adapters.telemetryWrites.reset() });
}

/**
 * Wiring for one process: engines first (local ones only where no address is
 * configured), then the shared adapters, then the roles this process runs,
 * each a list of components. Stopping runs the same list backwards; a start
 * that fails stops what had started and hands back nothing.
 */
export async function startStack(given: Config, log: Logger): Promise<Stack> {
  const config = withSharedSecrets(given);
  const registry = createRegistry();
  const engines = localEngines(config, log, registry);
  const { components: adapterComponents, adapters } = sharedAdapters(config, engines.addresses, registry, log);
  const components: Component[] = [...engines.components, ...adapterComponents];
  const loops: HealthProbe[] = [...engines.probes];
  const has = (role: Config['roles'][number]) => config.roles.includes(role);

  const streamWorkers = has('stream-workers') ? streamWorkersRole(config, adapters) : undefined;
  if (streamWorkers) {
    components.push(...streamWorkers.components);
    loops.push({ name: 'stream-workers', probe: () => streamWorkers.worker.probe() }, ...streamWorkers.notifier.probes);
  }
  // The mitigations start before the worker whose automation runs write their ledger.
  const mitigation = has('temporal-worker') && engines.addresses.bgpSpeaker ? mitigationRole(config, adapters, engines.addresses.bgpSpeaker) : undefined;
  if (mitigation) {
    components.push(...mitigation.components);
    loops.push({ name: 'mitigation-reconciler', probe: () => mitigation.reconciler.probe() });
  }
  const temporalWorker = has('temporal-worker') ? temporalWorkerRole(config, engines.addresses, adapters, mitigation) : undefined;
  if (temporalWorker) {
    components.push(...temporalWorker.components);
    loops.push({ name: 'temporal-worker', probe: () => temporalWorker.worker.probe() }, { name: 'automation-starter', probe: () => temporalWorker.starter.probe() });
  }
  const collector = has('collector') ? collectorRole(config, adapters) : undefined;
  if (collector) {
    components.push(...collector.components);
    loops.push({ name: 'collector', probe: () => collector.collector.probe() });
  }
  if (engines.nats) watchNatsLiveness(engines.nats, config, adapters, streamWorkers?.worker);
  const api = has('api') ? apiRole(config, adapters, loops) : undefined;
  if (api) components.push(...api.components);

  const lifecycle = new Lifecycle(log);
  try {
    await lifecycle.startAll(components);
  } catch (err) {
    await lifecycle.stopAll();
    throw err;
  }
  return {
    config,
    clickhouse: adapters.clickhouse,
    nats: adapters.nats,
    temporal: adapters.temporal,
    registry,
    adapters,
    routes: api?.routes,
    temporalWorker: temporalWorker?.worker,
    collector: collector?.collector,
    snmpPoller: streamWorkers?.snmpPoller,
    rollupFolder: streamWorkers?.folder,
    url: api?.server.url,
    stop: () => lifecycle.stopAll(),
  };
}
