import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { AddressEnrichment } from '../../application/enrichment/address-enrichment';
import { NetworkTablesCache } from '../../application/enrichment/networks-service';
import type { Logger } from '../../observability/logger';
import type { Registry } from '../../observability/metrics';
import { HttpClickHouse, type ClickHouse } from '../../storage/clickhouse';
import { ChdbClickHouse } from '../../storage/chdb-clickhouse';
import { EnrichmentRepo } from '../../storage/enrichment/enrichment-repo';
import { NetworksRepo } from '../../storage/enrichment/networks-repo';
import { migrate } from '../../storage/migrations';
import { applyRetentionTtl } from '../../storage/retention';
import { JetStreamWriteHealth } from '../../streams/jetstream-write-health';
import { Locks, defaultLockConfig } from '../../streams/locks';
import { NatsClient } from '../../streams/nats-client';
import type { TopologyConfig } from '../../streams/topology';
import { TemporalClient } from '../../temporal/temporal-client';
import { startStep, type Component } from '../component';
import type { Config } from '../config';
import { ensureJetStreamObjects, topologyOf } from '../jetstream-objects';
import type { EngineAddresses } from './engines';
import { processRoles, type ProcessRole } from '../process.config';

/** The connections every role of a process shares, and the schema and topology they need. */
export interface Adapters {
  clickhouse: ClickHouse;
  nats: NatsClient;
  temporal: TemporalClient;
  /** Named locks shared by every process (schema migrations, exporter addresses). */
  locks: Locks;
  /** The JetStream topology this process ensures at start; a worker recreates its consumer from it. */
  topology: TopologyConfig;
  /** Whether this process's telemetry publishes are stored: its publishers report, the nats-server's liveness reads. */
  telemetryWrites: JetStreamWriteHealth;
  registry: Registry;
  log: Logger;
  /** The address databases, in a process whose roles ingest flows (api, collector); loaded after the schema. */
  enrichment?: AddressEnrichment;
  /** The workspaces' networks in force, beside the enrichment that labels flows with them. */
  networks?: NetworkTablesCache;
}

/** Large chDB inserts are spooled in memory-backed /dev/shm where there is one. */
const chdbSpoolDir = (config: Config) => config.clickhouse.chdbSpoolDir ?? (fs.existsSync('/dev/shm') ? '/dev/shm' : os.tmpdir());

/**
 * The process's private inbox: `_INBOX_<role>` (`_INBOX_api`, …), or the
 * roles it runs joined by `_`. deploy/nats/nettel.conf lets each role's user
 * subscribe to its own prefix only, so no role reads the answers to
 * another's requests (the api's reads of the session bucket among them).
 */
export const inboxPrefixOf = (roles: readonly ProcessRole[]): string => `_INBOX_${processRoles.filter((r) => roles.includes(r)).join('_')}`;

export function sharedAdapters(config: Config, addresses: EngineAddresses, registry: Registry, log: Logger) {
  const clickhouse: ClickHouse = config.clickhouse.url
    ? new HttpClickHouse({ ...config.clickhouse, url: config.clickhouse.url })
    : new ChdbClickHouse({ dataDir: path.join(config.dataDir, 'chdb'), database: config.clickhouse.database, spoolDir: chdbSpoolDir(config), registry });
  const nats = new NatsClient({ url: addresses.natsUrl, name: 'nettel', auth: addresses.natsAuth, tls: config.nats.tls, inboxPrefix: inboxPrefixOf(config.roles) }, log);
  const { namespace, tls, apiKey } = config.temporal;
  const temporal = new TemporalClient({ address: addresses.temporalAddress, namespace, tls, apiKey }, log);
  const { prefix, replicas } = config.nats;
  const topology = topologyOf(config);
  const locks = new Locks({ ...defaultLockConfig(prefix), replicas }, nats, log);
  const components: Component[] = [
    clickhouse,
    nats,
    locks,
    // One process migrates at a time: two converting one table at once would corrupt it.
    startStep(() =>
      locks.withLock('schema-migrations', async () => {
        await migrate(clickhouse, { retention: config.clickhouse.retention, log });
        // A changed retention setting applies to the tables that exist already.
        const changed = await applyRetentionTtl(clickhouse, config.clickhouse.retention);
        if (changed.length) log.info({ tables: changed, retention: config.clickhouse.retention }, 'retention applied');
      }),
    ),
    temporal,
    startStep(() => ensureJetStreamObjects(config, nats, log)),
  ];
  const ingestsFlows = config.roles.includes('api') || config.roles.includes('collector');
  const networks = ingestsFlows ? new NetworkTablesCache({ refreshMs: config.enrichment.networksRefreshMs }, { repo: new NetworksRepo(clickhouse), log }) : undefined;
  const enrichment = ingestsFlows ? new AddressEnrichment({ ...config.enrichment, cacheDir: config.enrichment.cacheDir ?? path.join(config.dataDir, 'enrichment-cache') }, { repo: new EnrichmentRepo(clickhouse), networks, registry, log }) : undefined;
  if (networks && enrichment) components.push(networks, enrichment);
  const adapters: Adapters = { clickhouse, nats, temporal, locks, topology, telemetryWrites: new JetStreamWriteHealth(), registry, log, enrichment, networks };
  return { components, adapters };
}
