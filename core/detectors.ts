import { derivedId } from './ids';
import { isAddressText, type MetricRow, type SignalRow } from './telemetry';

/** The environment a metric event without one correlates under. */
export const defaultEnvironment = 'default';

/** The key of a traffic-volume incident: service = the destination address, in this environment and region. */
export const trafficVolumeKey = { environment: 'network', region: 'global' } as const;

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
 * | metric_threshold | a metric event's value reaches its metric's bound: at least `atLeast`, or at most `atMost` | telemetry `metric`, the event's service/environment/region |
 * | traffic_volume | bytes to one destination within one minute (event time) reach `bytesPerMinute`; an exporter with its own threshold is also judged on its flows alone | telemetry `flow`, service = the destination address, environment `network`, region `global` |
 *
 * The rules are an input (a workspace's detection rules, core/detection-rules):
 * the same events under the same rules give the same signals.
 */
export interface MetricThreshold {
  /** Fires when the value is at least this. */
  atLeast?: number;
  /** Fires when the value is at most this. */
  atMost?: number;
}

export interface DetectorRules {
  /** By metric name; a metric without an entry has no threshold. */
  metricThresholds: Readonly<Record<string, MetricThreshold>>;
  bytesPerMinute: number;
  /** By exporter address (normalized, core/exporter): bytes to one destination within one minute in that exporter's flows. */
  bytesPerMinuteByExporter: Readonly<Record<string, number>>;
}

export const defaultDetectorRules: DetectorRules = {
  metricThresholds: {
    latency_ms: { atLeast: 1000 },
    error_rate: { atLeast: 0.05 },
    packet_loss: { atLeast: 0.02 },
    cpu_utilization: { atLeast: 0.95 },
  },
  bytesPerMinute: 1_000_000_000,
  bytesPerMinuteByExporter: {},
};

/** The bound a value breaks, as the rule names it (`>=1000`, `<=0.5`), or undefined. */
function breached(threshold: MetricThreshold | undefined, value: number): string | undefined {
  if (threshold?.atLeast !== undefined && value >= threshold.atLeast) return `>=${threshold.atLeast}`;
  if (threshold?.atMost !== undefined && value <= threshold.atMost) return `<=${threshold.atMost}`;
  return undefined;
}

/** A rule's entry by name; own entries only, so a metric named `constructor` has none. */
export const ownEntry = <T>(record: Readonly<Record<string, T>>, name: string): T | undefined =>
  Object.prototype.hasOwnProperty.call(record, name) ? record[name] : undefined;

export function metricThresholdSignals(events: readonly MetricRow[], rules: DetectorRules = defaultDetectorRules): SignalRow[] {
  const out: SignalRow[] = [];
  for (const e of events) {
    const bound = breached(ownEntry(rules.metricThresholds, e.metric), e.value);
    if (bound === undefined) continue;
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
      latency_ms: e.metric === 'latency_ms' ? Math.min(Math.max(Math.round(e.value), 0), 86_400_000) : 0,
      rule: `metric_threshold:${e.metric}${bound}`,
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
  /** Set when the bytes are one exporter's flows only, judged by that exporter's threshold. */
  exporter?: string;
}

/** The threshold a destination minute is judged by: its exporter's, or the workspace's. */
function trafficThreshold(m: DestinationMinute, rules: DetectorRules): number | undefined {
  return m.exporter === undefined ? rules.bytesPerMinute : ownEntry(rules.bytesPerMinuteByExporter, m.exporter);
}

export function trafficVolumeSignals(
  minutes: readonly DestinationMinute[],
  rules: DetectorRules = defaultDetectorRules,
  receivedAt = 0,
): SignalRow[] {
  const out: SignalRow[] = [];
  for (const m of minutes) {
    const threshold = trafficThreshold(m, rules);
    if (threshold === undefined || m.bytes < threshold) continue;
    const byExporter = m.exporter === undefined ? [] : [m.exporter];
    out.push({
      org_id: m.org_id,
      event_id: derivedId('evt', 'traffic_volume', m.org_id, m.dst_ip, m.minute, ...byExporter),
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
      rule: m.exporter === undefined ? `traffic_volume>=${threshold}B/min` : `traffic_volume[exporter=${m.exporter}]>=${threshold}B/min`,
    });
  }
  return out;
}
