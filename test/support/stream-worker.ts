import type { Registry } from 'prom-client';
import { Correlator } from '../../application/correlator';
import { createLogger } from '../../observability/logger';
import type { ClickHouse } from '../../storage/clickhouse';
import { IncidentsRepo } from '../../storage/incidents-repo';
import { SignalRuns } from '../../storage/signal-runs';
import { TelemetryStore } from '../../storage/telemetry-store';
import { StreamWorker, defaultStreamWorkerConfig, type StreamWorkerConfig } from '../../workers/telemetry/stream-worker';
import type { TelemetryWrites } from '../../workers/telemetry/stream-worker-ports';
import type { TestStack } from './test-stack';

export interface TestWorkerOptions {
  /** Another way to ClickHouse than the stack's (a proxy that cuts it, say). */
  clickhouse?: ClickHouse;
  /** Where the worker's metrics go: the stack's unless given. */
  registry?: Registry;
  /** Replaces the worker's writes (to count or break them). */
  store?: TelemetryWrites;
  config?: Partial<StreamWorkerConfig>;
}

/** A stream worker on a test stack's NATS and topology, as the stream-workers role builds it, flushing every 20 ms. */
export function streamWorkerOn(t: TestStack, opts: TestWorkerOptions = {}): StreamWorker {
  const { stack } = t;
  const clickhouse = opts.clickhouse ?? stack.clickhouse;
  const registry = opts.registry ?? stack.registry;
  const telemetry = new TelemetryStore(clickhouse);
  const correlator = new Correlator({ signals: new SignalRuns(clickhouse), incidents: new IncidentsRepo(clickhouse), registry });
  const deps = { nats: stack.nats, store: opts.store ?? telemetry, correlator, registry, log: createLogger('silent'), topology: stack.adapters.topology };
  return new StreamWorker({ ...defaultStreamWorkerConfig(stack.config.nats.prefix), maxWaitMs: 20, ...opts.config }, deps);
}
