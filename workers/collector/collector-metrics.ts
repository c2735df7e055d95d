import { counter, gauge, type Registry } from '../../observability/metrics';

/**
 * What the collector counts. Every datagram or flow it does not store is
 * counted by reason: GoFlow2's decoding failures are read from its own
 * endpoint; the rest are the collector's.
 */
export const collectorMetrics = (registry: Registry) => ({
  datagrams: counter(registry, {
    name: 'nettel_collector_datagrams_total',
    help: 'NetFlow, IPFIX and sFlow datagrams GoFlow2 received',
  }),
  droppedDatagrams: counter(registry, {
    name: 'nettel_collector_dropped_datagrams_total',
    help: 'Datagrams not stored, by reason: decode_error (garbage, truncated, unknown version), unknown_template, queue_full, unregistered_exporter',
    labelNames: ['reason'] as const,
  }),
  flows: counter(registry, {
    name: 'nettel_collector_flows_accepted_total',
    help: 'Collected flows written to the JetStream telemetry stream',
  }),
  droppedFlows: counter(registry, {
    name: 'nettel_collector_dropped_flows_total',
    help: 'Decoded flows not stored, by reason: unregistered_exporter, no_address, empty_flow, bad_time, malformed_message, shutdown',
    labelNames: ['reason'] as const,
  }),
  unknownAggregated: counter(registry, {
    name: 'nettel_collector_unknown_exporter_counts_aggregated_total',
    help: 'Counts of unregistered senders kept under their prefix (/24, /64) or one overflow bucket because too many addresses sent in a minute',
    labelNames: ['to'] as const,
  }),
  templates: counter(registry, {
    name: 'nettel_collector_templates_total',
    help: 'NetFlow v9 and IPFIX templates received (a flood of them shows here)',
  }),
  sflowAgentMismatches: counter(registry, {
    name: 'nettel_collector_sflow_agent_mismatch_total',
    help: 'sFlow datagrams whose agent address differs from their UDP source; their flows are routed by the source, never by the agent they claim',
  }),
  publishRetries: counter(registry, {
    name: 'nettel_collector_publish_retries_total',
    help: 'Batches of collected flows published again after JetStream refused or did not answer',
  }),
  restarts: counter(registry, {
    name: 'nettel_collector_goflow2_restarts_total',
    help: 'Times GoFlow2 exited unasked and the collector started it again',
  }),
});
export type CollectorMetrics = ReturnType<typeof collectorMetrics>;

export const collectorGauges = (registry: Registry, read: { up(): number; exporters(): number; paused(): number }) => ({
  up: gauge(registry, {
    name: 'nettel_collector_goflow2_up',
    help: '1 while the GoFlow2 child process runs',
    collect() {
      this.set(read.up());
    },
  }),
  exporters: gauge(registry, {
    name: 'nettel_collector_registered_exporters',
    help: 'Registered exporters in the collector\'s copy of the registry',
    collect() {
      this.set(read.exporters());
    },
  }),
  paused: gauge(registry, {
    name: 'nettel_collector_paused',
    help: '1 while the collector stops reading GoFlow2 because JetStream has too many batches in flight',
    collect() {
      this.set(read.paused());
    },
  }),
});
