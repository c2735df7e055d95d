import { Correlator } from '../../application/correlator';
import { createLogger } from '../../observability/logger';
import { IncidentsRepo } from '../../storage/incidents-repo';
import { TelemetryStore } from '../../storage/telemetry-store';
import { StreamWorker, defaultStreamWorkerConfig, type StreamWorkerConfig } from '../../workers/stream-worker';
import type { TelemetryWrites } from '../../workers/stream-worker-ports';
import type { TestStack } from './test-stack';

/** A stream worker on a test stack's engines and topology, as the stream-workers role builds it; `store` replaces its writes. */
export function streamWorkerOn(t: TestStack, opts: { store?: TelemetryWrites; config?: Partial<StreamWorkerConfig> } = {}): StreamWorker {
  const { stack } = t;
  const telemetry = new TelemetryStore(stack.clickhouse);
  const correlator = new Correlator({ store: telemetry, incidents: new IncidentsRepo(stack.clickhouse), registry: stack.registry });
  const deps = { nats: stack.nats, store: opts.store ?? telemetry, correlator, registry: stack.registry, log: createLogger('silent'), topology: stack.adapters.topology };
  return new StreamWorker({ ...defaultStreamWorkerConfig(stack.config.nats.prefix), maxWaitMs: 20, ...opts.config }, deps);
}
