import { trafficVolumeKey } from '../detectors';
import { derivedId } from '../ids';
import type { SignalRow } from '../telemetry';
import type { RateDecision } from './detect';

/**
 * A rate decision as a correlation signal, under the traffic-volume key
 * convention (core/detectors.ts: service = the target, environment
 * `network`, region `global`), so a flood's decisions join one incident per
 * target. Its id comes from what decided it (workspace, detector version,
 * scope, target, window end, rule): a redelivery or a second detector that
 * decides it again yields the same id, stored once. Its event time is the
 * window's last millisecond; the rule text carries the version a replay
 * re-runs (core/detection/version.ts).
 */
export function rateSignal(orgId: string, d: RateDecision, receivedAt: number): SignalRow {
  return {
    org_id: orgId,
    event_id: derivedId('evt', 'rate', orgId, d.detector_version, d.scope, d.target, d.window_end, d.rule),
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
