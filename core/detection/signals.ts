import { trafficVolumeKey } from '../detectors';
import { derivedId } from '../ids';
import type { SignalRow } from '../telemetry';
import type { RateDecision } from './detect';

/** What a rate signal is made of: a closed window's decision, or an early crossing (early-crossings.ts). */
export type RateSignalFacts = Pick<RateDecision, 'detector_version' | 'scope' | 'target' | 'window_end' | 'rule'>;

/**
 * A rate decision as a correlation signal, under the traffic-volume key
 * convention (core/detectors.ts: service = the target, environment
 * `network`, region `global`), so a flood's decisions join one incident per
 * target. Its id comes from what decided it (workspace, detector version,
 * scope, target, window end, and for version 1 the rule): a redelivery or a
 * second detector that decides it again yields the same id, stored once
 * (application/derived-signals.ts). From version 2 on the rule names the
 * scope only and the id leaves it out, so a window reported early and the
 * same window's decision at its close are one signal. Its event time is the
 * window's last millisecond; the rule text carries the version a replay
 * re-runs (core/detection/version.ts).
 */
export function rateSignal(orgId: string, d: RateSignalFacts, receivedAt: number): SignalRow {
  const identity = d.detector_version === 1 ? [d.window_end, d.rule] : [d.window_end];
  return {
    org_id: orgId,
    event_id: derivedId('evt', 'rate', orgId, d.detector_version, d.scope, d.target, ...identity),
    ts: d.window_end - 1,
    received_at: receivedAt,
    telemetry: 'flow',
    service: d.target,
    environment: trafficVolumeKey.environment,
    region: trafficVolumeKey.region,
    asn: 0,
    src_ip: '',
    dst_ip: d.scope === 'host' ? d.target : '',
    dst_port: 0,
    // As for traffic_volume: the rule is recorded, not a volume that depends on the window's neighbours.
    bytes: 0,
    latency_ms: 0,
    rule: d.rule,
  };
}
