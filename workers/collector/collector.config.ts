import { defineSettings, integer, optionalText, port, setting, type SettingValues } from '../../core/settings';
import { defaultCollectorTuning } from './collector';

const shape = {
  COLLECTOR_HOST: setting(optionalText(), "address the flow collector's UDP listeners bind", '`HOST`'),
  COLLECTOR_NETFLOW_PORT: setting(port().default(2055), 'NetFlow v5/v9 and IPFIX port'),
  COLLECTOR_SFLOW_PORT: setting(port().default(6343), 'sFlow port'),
  COLLECTOR_WORKERS: setting(integer(1, 64).default(2), "GoFlow2's decoding workers per port"),
  COLLECTOR_QUEUE_SIZE: setting(integer(1, 10_000_000).default(100_000), 'the datagrams GoFlow2 queues while its workers are busy'),
  COLLECTOR_METRICS_PORT: setting(port(0).default(0), "GoFlow2's own metrics endpoint on 127.0.0.1, read by the collector; `0` picks a free port"),
  COLLECTOR_REGISTRY_REFRESH_MS: setting(integer(100, 600_000).default(defaultCollectorTuning.registryRefreshMs), 'how often a collector reads the exporter registry again'),
  GOFLOW2: setting(optionalText(), 'the GoFlow2 binary the collector runs', "the set-up's build"),
};

/** The collector role: GoFlow2's UDP listeners and how the collector reads the exporter registry. */
export const collectorSettings = defineSettings('The flow collector', shape, (e: SettingValues<typeof shape> & { HOST: string }) => ({
  collector: {
    host: e.COLLECTOR_HOST ?? e.HOST,
    netflowPort: e.COLLECTOR_NETFLOW_PORT,
    sflowPort: e.COLLECTOR_SFLOW_PORT,
    /** GoFlow2's own metrics endpoint on loopback; 0 picks a free port. */
    metricsPort: e.COLLECTOR_METRICS_PORT,
    workers: e.COLLECTOR_WORKERS,
    queueSize: e.COLLECTOR_QUEUE_SIZE,
    registryRefreshMs: e.COLLECTOR_REGISTRY_REFRESH_MS,
    /** A GoFlow2 binary; without one, the set-up's build in the tools folder. */
    goflow2: e.GOFLOW2,
  },
}));
