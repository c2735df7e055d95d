import { goflow2BinaryName, requireExecutable } from '../../engines/binaries';
import { ExportersRepo } from '../../storage/exporters-repo';
import { TelemetryPublisher } from '../../streams/telemetry-publisher';
import { Collector, defaultCollectorTuning } from '../../workers/collector/collector';
import type { Config } from '../config';
import type { Adapters } from './adapters';

/** The collector role: GoFlow2 on the flow ports, collected flows published to the telemetry stream. */
export function collectorRole(config: Config, a: Adapters) {
  const c = config.collector;
  const binary =
    c.goflow2 ?? requireExecutable(goflow2BinaryName, [config.toolsDir, ...config.binPath], 'run `npm start` or `node scripts/setup.mjs` to build it, or set GOFLOW2');
  const collector = new Collector(
    {
      ...defaultCollectorTuning,
      registryRefreshMs: c.registryRefreshMs,
      supervision: config.supervision,
      goflow2: { binary, host: c.host, netflowPort: c.netflowPort, sflowPort: c.sflowPort, metricsPort: c.metricsPort, workers: c.workers, queueSize: c.queueSize },
    },
    {
      publisher: new TelemetryPublisher({ nats: a.nats, prefix: config.nats.prefix, registry: a.registry, writes: a.telemetryWrites }),
      exporters: new ExportersRepo(a.clickhouse),
      enricher: a.enrichment,
      registry: a.registry,
      log: a.log,
    },
  );
  return { components: [collector], collector };
}
