import { metricThresholdSignals, trafficVolumeSignals } from '../../core/detectors';
import type { MetricRow } from '../../core/telemetry';

const metric = (over: Partial<MetricRow>): MetricRow => ({
  org_id: 'org_a', event_id: 'evt_1', ts: 1_800_000_000_000, received_at: 0,
  service: 'api', environment: 'prod', metric: 'error_rate', value: 0.01, region: 'eu', ...over,
});

describe('detectors', () => {
  test('a metric below its threshold yields no signal', () => {
    expect(metricThresholdSignals([metric({ value: 0.04 })])).toEqual([]);
  });

  test('a metric at its threshold yields one metric signal naming the rule', () => {
    const [s] = metricThresholdSignals([metric({ value: 0.05 })]);
    expect(s).toMatchObject({ telemetry: 'metric', service: 'api', environment: 'prod', rule: 'metric_threshold:error_rate>=0.05' });
  });

  test('a metric with no rule yields no signal', () => {
    expect(metricThresholdSignals([metric({ metric: 'temperature', value: 1e9 })])).toEqual([]);
  });

  test('a destination over the byte rate yields a flow signal whose id depends only on org, destination and minute', () => {
    const minute = { org_id: 'org_a', dst_ip: '203.0.113.9', minute: 1_800_000_000_000, bytes: 2e9 };
    const [a] = trafficVolumeSignals([minute], undefined, 1);
    const [b] = trafficVolumeSignals([{ ...minute, bytes: 3e9 }], undefined, 2);
    expect(a!.event_id).toBe(b!.event_id);
    expect(a).toMatchObject({ telemetry: 'flow', service: '203.0.113.9', environment: 'network' });
  });

  test('a destination under the byte rate yields nothing', () => {
    expect(trafficVolumeSignals([{ org_id: 'o', dst_ip: '1.1.1.1', minute: 0, bytes: 10 }])).toEqual([]);
  });
});
