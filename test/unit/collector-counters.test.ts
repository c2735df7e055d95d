import fs from 'node:fs';
import path from 'node:path';
import { goflow2BinaryName } from '../../engines/binaries';
import { CounterDeltas, parseGoFlow2Metrics } from '../../workers/collector/goflow2-counters';
import { overflowAddress, prefixOf, UnknownExporterCounts } from '../../workers/collector/unknown-exporter-counts';
import { counter, createRegistry } from '../../observability/metrics';
import { metricTotal } from '../support/metrics';
import { createLogger } from '../../observability/logger';
import type { UnknownExporterCount } from '../../storage/exporters-repo';

const exposition = `# HELP goflow2_flow_traffic_packets_total Packets received.
# TYPE goflow2_flow_traffic_packets_total counter
goflow2_flow_traffic_packets_total{local_ip="127.0.0.1",local_port="2055",remote_ip="192.0.2.1",type="netflow"} 10
goflow2_flow_traffic_packets_total{local_ip="127.0.0.1",local_port="6343",remote_ip="192.0.2.1",type="sflow"} 5
goflow2_flow_traffic_packets_total{local_ip="127.0.0.1",local_port="2055",remote_ip="2001:db8::9",type="netflow"} 2
goflow2_flow_decoder_error_total{name="netflow",router="192.0.2.1"} 3
goflow2_flow_process_nf_errors_total{error="template_not_found",router="192.0.2.1"} 4
goflow2_flow_process_nf_templates_total{router="192.0.2.1",type="template",version="9"} 7
goflow2_flow_process_sf_agent_mismatch_total 6
`;

describe('collector counters', () => {
  test('GoFlow2 exposition gives datagrams per address and failures by reason', () => {
    const c = parseGoFlow2Metrics(exposition);
    expect([...c.datagramsBy]).toEqual([
      ['192.0.2.1', 15],
      ['2001:db8::9', 2],
    ]);
    expect([c.decodeErrors, c.unknownTemplates, c.templates, c.queueDrops, c.sflowAgentMismatches]).toEqual([3, 4, 7, 0, 6]);
  });

  test('successive readings become increments, and a reset counter counts from zero', () => {
    const d = new CounterDeltas();
    expect([d.delta('k', 5), d.delta('k', 8), d.delta('k', 2)]).toEqual([5, 3, 2]);
  });

  test('readings of routers GoFlow2 no longer shows are forgotten, and a router back counts from zero', () => {
    const d = new CounterDeltas();
    for (let i = 0; i < 1_000; i += 1) d.delta(`datagrams|10.0.${i >> 8}.${i & 255}`, 7);
    d.delta('decode_error', 3);
    d.keepOnly('datagrams|', new Set(['datagrams|10.0.0.1']));
    expect(d.size).toBe(2);
    expect(d.delta('datagrams|10.0.0.2', 4)).toBe(4);
  });

  test('unknown exporter counts a failed write kept are added to the counts taken meanwhile', async () => {
    const written: UnknownExporterCount[][] = [];
    let fail = true;
    const counts = new UnknownExporterCounts(
      { flushMs: 60_000 },
      {
        sink: { recordUnknown: (c) => (fail ? Promise.reject(new Error('down')) : (written.push(c), Promise.resolve())) },
        log: createLogger('silent', 'test'),
        now: () => 120_000,
      },
    );
    counts.add('192.0.2.1', 2, 0);
    const flushing = counts.flush();
    counts.add('192.0.2.1', 1, 5);
    await flushing;
    fail = false;
    await counts.flush();
    expect(written).toEqual([[{ address: '192.0.2.1', minute: 120_000, datagrams: 3, flows: 5 }]]);
  });

  test('past its bound, a new sender is counted under its /24 or /64, then under one overflow bucket', async () => {
    const written: UnknownExporterCount[][] = [];
    const registry = createRegistry();
    const aggregated = counter(registry, { name: 'aggregated_total', help: 'h', labelNames: ['to'] as const });
    const counts = new UnknownExporterCounts(
      { flushMs: 60_000, maxAddresses: 2 },
      { sink: { recordUnknown: (c) => (written.push(c), Promise.resolve()) }, log: createLogger('silent', 'test'), aggregated, now: () => 120_000 },
    );
    for (const address of ['192.0.2.1', '192.0.2.2', '2001:db8:1:2::9', '2001:db8:1:2:ffff::1', '198.51.100.7', '203.0.113.1']) counts.add(address, 1, 0);
    counts.add('192.0.2.1', 1, 0);
    await counts.flush();
    expect(written[0]!.map((c) => [c.address, c.datagrams])).toEqual([
      ['192.0.2.1', 2],
      ['192.0.2.2', 1],
      ['2001:db8:1:2::/64', 2],
      ['198.51.100.0/24', 1],
      [overflowAddress, 1],
    ]);
    expect(await metricTotal(registry, 'aggregated_total')).toBe(4);
  });

  test.each([
    ['10.1.2.3', '10.1.2.0/24'],
    ['2001:db8::1', '2001:db8:0:0::/64'],
    ['2001:db8:aa:bb:cc::1', '2001:db8:aa:bb::/64'],
    ['::1', '0:0:0:0::/64'],
    ['fe80::', 'fe80:0:0:0::/64'],
  ])('the prefix of %s is %s', (address, prefix) => {
    expect(prefixOf(address)).toBe(prefix);
  });

  test('the GoFlow2 binary the service looks for is the one the set-up builds', () => {
    // The set-up is plain ESM that jest does not load: its one declaration is read as text.
    const setup = fs.readFileSync(path.resolve(__dirname, '../../scripts/goflow2-fixes.mjs'), 'utf8');
    expect(/goflow2Binary = '([^']+)'/.exec(setup)?.[1]).toBe(goflow2BinaryName);
  });
});
