import { flowRowFields, flowRowJson, toFlowRow } from '../../core/flow';
import { hasRowsOf, rowShapeOf } from '../../core/row-shape';
import { metricRowFields, metricRowSchema, signalRowFields, signalRowSchema, toMetricRow, toSignalRow } from '../../core/telemetry';

const flows = rowShapeOf(flowRowFields);
const stamp = { org_id: 'org_a', event_id: 'evt_1', ts: 1_700_000_000_000, received_at: 1_700_000_000_001 };
const flowLine = (org = 'org_a') => flowRowJson({ src_ip: '10.0.0.1', dst_ip: '10.0.0.2', bytes: 10, packets: 1, protocol: 'udp' }, { ...stamp, org_id: org }).json;
const rowsOf = (text: string, org = 'org_a', shape = flows) => hasRowsOf(Buffer.from(text), org, shape);

describe('the row screen: every line one row of the workspace, parsed', () => {
  test('rows as the producers write them pass, for each kind', () => {
    const full = { src_ip: '10.0.0.1', dst_ip: '::1', bytes: 10, packets: 1, protocol: 'u"dp\\', src_port: 1, dst_port: 2, exporter: '192.0.2.1', in_if: 1, out_if: 2, src_as: 3, dst_as: 4, tcp_flags: 2, tos: 0, flow_start: 5, flow_end: 6, sampling_rate: 100 };
    expect(rowsOf(`${flowRowJson(full, stamp).json}\n${JSON.stringify(toFlowRow(full, stamp))}\n`)).toBe(true);
    const signal = toSignalRow({ telemetry: 'bgp', service: 'edge\u2028é', environment: 'prod', region: 'eu', latency_ms: 5 }, stamp);
    expect(rowsOf(JSON.stringify(signal) + '\n', 'org_a', rowShapeOf(signalRowFields))).toBe(true);
    const metric = toMetricRow({ service: 'api', metric: 'cpu', value: -1.5e-7, region: 'eu' }, stamp);
    expect(rowsOf(JSON.stringify(metric) + '\n', 'org_a', rowShapeOf(metricRowFields))).toBe(true);
  });

  test('a second object on a line, after nothing, a comma or a space, is refused', () => {
    for (const between of ['', ',', ' ', '\t', '\r']) expect(rowsOf(`${flowLine()}${between}${flowLine('org_b')}\n`)).toBe(false);
  });

  test('a row of another org, or one that names org_id again, is refused', () => {
    expect(rowsOf(flowLine('org_b') + '\n')).toBe(false);
    expect(rowsOf(flowLine().replace('"ts":', '"org_id":"org_b","ts":') + '\n')).toBe(false);
  });

  test('a field the shape lacks, a field twice, or an escaped field name is refused', () => {
    expect(rowsOf(flowLine().replace('}', ',"write_id":7}') + '\n')).toBe(false);
    expect(rowsOf(flowLine().replace('"bytes":10', '"bytes":10,"bytes":99') + '\n')).toBe(false);
    expect(rowsOf(flowLine().replace('"bytes"', '"byt\\u0065s"') + '\n')).toBe(false);
  });

  test('a value of the wrong type, nested, or not JSON is refused', () => {
    expect(rowsOf(flowLine().replace('"bytes":10', '"bytes":"10"') + '\n')).toBe(false);
    expect(rowsOf(flowLine().replace('"protocol":"udp"', '"protocol":{"org_id":"org_b"}') + '\n')).toBe(false);
    expect(rowsOf(flowLine().replace('"bytes":10', '"bytes":[10]') + '\n')).toBe(false);
    expect(rowsOf(flowLine().replace('"bytes":10', '"bytes":010') + '\n')).toBe(false);
    expect(rowsOf(flowLine().replace('"protocol":"udp"', '"protocol":"u\\x"') + '\n')).toBe(false);
    expect(rowsOf(flowLine().replace('"protocol":"udp"', '"protocol":"u\u0001"') + '\n')).toBe(false);
    expect(rowsOf(flowLine().replace('"bytes":10', '"bytes": 10') + '\n')).toBe(false);
  });

  test('a line that is cut short, a blank line, or a body without its last newline is refused', () => {
    expect(rowsOf(flowLine().slice(0, -1) + '\n')).toBe(false);
    expect(rowsOf(`${flowLine()}\n\n${flowLine()}\n`)).toBe(false);
    expect(rowsOf(flowLine())).toBe(false);
    expect(rowsOf('')).toBe(false);
  });
});

describe('the schemas of signal and metric rows read back from the stream', () => {
  const signal = toSignalRow({ telemetry: 'bgp', service: 'edge', environment: 'prod', region: 'eu' }, stamp);

  test('a row as the producers write it passes', () => {
    expect(signalRowSchema.safeParse(signal).success).toBe(true);
    expect(metricRowSchema.safeParse(toMetricRow({ service: 'api', metric: 'cpu', value: 1, region: 'eu' }, stamp)).success).toBe(true);
  });

  test('a kind, a label or a counter out of its bounds, or a field of no row, is refused', () => {
    expect(signalRowSchema.safeParse({ ...signal, telemetry: 'sql' }).success).toBe(false);
    expect(signalRowSchema.safeParse({ ...signal, service: 'x'.repeat(10_000) }).success).toBe(false);
    expect(signalRowSchema.safeParse({ ...signal, bytes: -1 }).success).toBe(false);
    expect(signalRowSchema.safeParse({ ...signal, incident_id: 'inc_x' }).success).toBe(false);
    expect(metricRowSchema.safeParse({ ...toMetricRow({ service: 'api', metric: 'cpu', value: 1, region: 'eu' }, stamp), value: 'NaN' }).success).toBe(false);
  });
});
