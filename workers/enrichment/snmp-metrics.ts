import { counter, gauge, type Registry } from '../../observability/metrics';

/** What the SNMP poller counts: every poll by result, the agents not answering now, and the interface rows written. */
export const snmpPollerMetrics = (registry: Registry) => ({
  polls: counter(registry, {
    name: 'nettel_snmp_polls_total',
    help: "Exporters' SNMP agents asked for their interfaces, by result: ok, failed (no answer, refused credentials, or a bad answer), unsealable (credentials that do not open)",
    labelNames: ['result'] as const,
  }),
  failingAgents: gauge(registry, {
    name: 'nettel_snmp_agents_failing',
    help: 'SNMP agents that did not answer their last poll (their last known interface names are kept)',
  }),
  interfacesWritten: counter(registry, {
    name: 'nettel_snmp_interface_rows_written_total',
    help: 'Interface rows written because an interface, its static override or its classification changed',
  }),
  roundErrors: counter(registry, {
    name: 'nettel_snmp_round_errors_total',
    help: 'Poll rounds that failed as a whole (ClickHouse could not be read or written)',
  }),
});
