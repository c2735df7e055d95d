import { derivedId } from './ids';
import { isAddressText, type MetricRow, type SignalRow } from './telemetry';

/** The environment a metric event without one correlates under. */
export const defaultEnvironment = 'default';

/** The key of a traffic-volume incident: service = the destination address, in this environment and region. */
const trafficVolumeKey = { environment: 'network', region: 'global' } as const;

/** The destination a correlation key watches, when it is a traffic-volume key. */
export function trafficVolumeDestination(key: { service: string; environment: string; region: string }): string | undefined {
  const matches = key.environment === trafficVolumeKey.environment && key.region === trafficVolumeKey.region;
  return matches && isAddressText(key.service) ? key.service : undefined;
}

/**
 * Detectors turn flows and metric events into correlation signals when a
 * rule fires; those signals then open or join incidents like posted ones.
 * A derived signal's id comes from its inputs, so a rule that fires again
 * for the same inputs yields the same signal, stored once.
 *
 * | detector | fires when | signal |
 * |---|---|---|
 * | metric_threshold | a metric event's value reaches the metric's threshold | telemetry `metric`, the event's service/environment/region |
 * | traffic_volume | bytes to one destination within one minute (event time) reach `bytesPerMinute` | telemetry `flow`, service = the destination address, environment `network`, region `global` |
 */
export interface DetectorRules {
  metricThresholds: Record<string, number>;
  bytesPerMinute: number;
}

export const defaultDetectorRules: DetectorRules = {
  metricThresholds: {
    latency_ms: 1000,
    error_rate: 0.05,
    packet_loss: 0.02,
    cpu_utilization: 0.95,
  },
  bytesPerMinute: 1_000_000_000,
};

export function metricThresholdSignals(events: readonly MetricRow[], rules: DetectorRules = defaultDetectorRules): SignalRow[] {
  const out: SignalRow[] = [];
  for (const e of events) {
    const threshold = rules.metricThresholds[e.metric];
    if (threshold === undefined || e.value < threshold) continue;
    out.push({
      org_id: e.org_id,
      event_id: derivedId('evt', 'metric_threshold', e.event_id),
      ts: e.ts,
      received_at: e.received_at,
      telemetry: 'metric',
      service: e.service,
      environment: e.environment || defaultEnvironment,
      region: e.region,
      asn: 0,
      src_ip: '',
      dst_ip: '',
      dst_port: 0,
      bytes: 0,
      latency_ms: e.metric === 'latency_ms' ? Math.min(Math.round(e.value), 86_400_000) : 0,
      rule: `metric_threshold:${e.metric}>=${threshold}`,
    });
  }
  return out;
}

export interface DestinationMinute {
  org_id: string;
  dst_ip: string;
  /** Start of the minute, epoch ms. */
  minute: number;
  bytes: number;
}

export function trafficVolumeSignals(
  minutes: readonly DestinationMinute[],
  rules: DetectorRules = defaultDetectorRules,
  receivedAt = 0,
): SignalRow[] {
  return minutes
    .filter((m) => m.bytes >= rules.bytesPerMinute)
    .map((m) => ({
      org_id: m.org_id,
      event_id: derivedId('evt', 'traffic_volume', m.org_id, m.dst_ip, m.minute),
      ts: m.minute,
      received_at: receivedAt,
      telemetry: 'flow' as const,
      service: m.dst_ip,
      environment: trafficVolumeKey.environment,
      region: trafficVolumeKey.region,
      asn: 0,
      src_ip: '',
      dst_ip: m.dst_ip,
      dst_port: 0,
      // The rule, not the running sum, is recorded: the sum at the moment it fired depends on batch boundaries.
      bytes: 0,
      latency_ms: 0,
      rule: `traffic_volume>=${rules.bytesPerMinute}B/min`,
    }));
}
