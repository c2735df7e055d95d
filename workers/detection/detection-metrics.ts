import { counter, gauge, type Registry } from '../../observability/metrics';

/** What the rate detectors' consumer counts: every flow it reads, by what became of it, and its decisions. */
export function detectionMetrics(registry: Registry) {
  return {
    flows: counter(registry, {
      name: 'nettel_detection_flows_total',
      help: 'Flows the rate detectors read, by outcome: counted, late (their bucket had closed), untracked (past the destination bound)',
      labelNames: ['outcome'] as const,
    }),
    refused: counter(registry, {
      name: 'nettel_detection_messages_refused_total',
      help: 'Messages of the detection feed refused (terminated, none of their flows counted), by reason: oversize, bad_subject, bad_headers, not_rows, org_mismatch, bad_row, unknown_workspace',
      labelNames: ['reason'] as const,
    }),
    quiet: counter(registry, {
      name: 'nettel_detection_quiet_total',
      help: 'Targets quiet for their quiet time after crossing, by what became of their incident: resolved, already_resolved, later_signal (another signal joined it since), no_incident',
      labelNames: ['outcome'] as const,
    }),
    decisions: counter(registry, { name: 'nettel_detection_decisions_total', help: 'Rate decisions (a window over a threshold), by attack type', labelNames: ['type'] as const }),
    early: counter(registry, { name: 'nettel_detection_early_crossings_total', help: 'Host windows reported as crossing before they closed (detector version 2): each also counts as a decision once closed' }),
    errors: counter(registry, {
      name: 'nettel_detection_errors_total',
      help: 'Failures of the rate detectors consumer, by stage; its held messages are offered again',
      labelNames: ['stage'] as const,
    }),
    restarts: counter(registry, { name: 'nettel_detection_consume_restarts_total', help: 'Re-opens of the detector consumer, by reason', labelNames: ['reason'] as const }),
    held: gauge(registry, { name: 'nettel_detection_held_messages', help: 'Messages the rate detectors hold until the windows their flows count in close' }),
    leading: gauge(registry, { name: 'nettel_detection_leader', help: '1 while this process holds the rate detectors lock and consumes their feed' }),
  };
}

export type DetectionMetrics = ReturnType<typeof detectionMetrics>;
