import { Correlator } from '../../application/correlator';
import { IncidentsRepo } from '../../storage/incidents-repo';
import { TelemetryStore } from '../../storage/telemetry-store';
import { RetentionJob } from '../../workers/retention';
import { StreamWorker, defaultStreamWorkerConfig } from '../../workers/stream-worker';
import type { Component } from '../component';
import type { Config } from '../config';
import type { Adapters } from './adapters';

const retentionIntervalMs = 3_600_000;

/** The stream-workers role: consume accepted telemetry into ClickHouse, correlate, expire old partitions. */
export function streamWorkersRole(config: Config, a: Adapters) {
  const store = new TelemetryStore(a.clickhouse);
  const correlator = new Correlator({ store, incidents: new IncidentsRepo(a.clickhouse), registry: a.registry });
  const worker = new StreamWorker(
    { ...defaultStreamWorkerConfig(config.nats.prefix), ...config.workers, ackWaitMs: config.nats.ackWaitMs },
    { nats: a.nats, store, correlator, registry: a.registry, log: a.log, topology: a.topology },
  );
  const retention = new RetentionJob(
    { retention: config.clickhouse.retention, intervalMs: retentionIntervalMs },
    { clickhouse: a.clickhouse, log: a.log, registry: a.registry },
  );
  const components: Component[] = [worker, retention];
  return { components, worker };
}
