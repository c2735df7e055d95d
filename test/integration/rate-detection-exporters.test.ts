import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { IncidentView, Page } from '../support/api-types';
import { registerExporter, startCollectorStack } from '../support/collector';
import { softflowdExport } from '../support/flow-exporters';
import { writePcap, type PcapFlow } from '../support/pcap';
import type { TestStack } from '../support/test-stack';
import { waitFor, waitForDetectionDrained, waitForTelemetryDrained } from '../support/wait';

/**
 * A SYN flood as a real exporter reports it: a generated pcap of 4,000
 * single-packet SYN flows (1 ms apart: 1,000 packets a second for 4 s) from
 * ten attackers to 10.20.0.9:80, replayed by softflowd (IPFIX) to the
 * running collector, opens one incident of type syn_flood.
 */
const attackers = Array.from({ length: 10 }, (_, i) => `10.10.0.${i + 1}`);
const flood: PcapFlow[] = Array.from({ length: 4_000 }, (_, i) => ({
  src: attackers[i % 10]!,
  dst: '10.20.0.9',
  protocol: 'tcp',
  srcPort: 1024 + i,
  dstPort: 80,
  packets: 1,
  payloadBytes: 0,
}));

describe('rate detection from a real exporter on chdb', () => {
  let t: TestStack;
  let netflowPort: number;
  let dir: string;
  beforeAll(async () => {
    const s = await startCollectorStack('chdb', { COLLECTOR_WORKERS: '1' });
    t = s.t;
    netflowPort = s.netflowPort;
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'nettel-flood-'));
  });
  afterAll(async () => {
    await t?.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  test('softflowd replaying a pcap of a SYN flood opens one syn_flood incident naming the attackers', async () => {
    const { key } = await t.mintKey({ role: 'operator' });
    expect((await t.request('PUT', '/v1/detection-rules', { key, body: { rates: { thresholds: { tcp_syn: { pps: 300 } } } } })).status).toBe(200);
    const address = '127.0.5.1';
    await registerExporter(t, key, address);
    const pcap = path.join(dir, 'syn-flood.pcap');
    writePcap(pcap, flood);
    await softflowdExport({ pcap, port: netflowPort, version: 10, sourceIp: address, paceMs: 1 });
    const incidents = async () => (await t.request<Page<IncidentView>>('GET', '/v1/incidents?limit=100', { key })).body.data;
    const opened = await waitFor(async () => ((await incidents()).length > 0 ? incidents() : undefined), 60_000, 'an incident');
    await waitForTelemetryDrained(t.stack.nats.jsm, t.stack.config.nats.prefix);
    await waitForDetectionDrained(t.stack.nats.jsm, t.stack.config.nats.prefix);
    expect((await incidents()).map((i) => [i.service, i.rule.split(':').slice(0, 3).join(':')])).toEqual([['10.20.0.9', 'rate.v1:host:syn_flood']]);
    const { attack } = (await t.request<{ attack: { type: string; top_sources: Array<{ address: string }>; exporters: Array<{ exporter: string }> } }>('GET', `/v1/incidents/${opened[0]!.id}`, { key })).body;
    expect(attack.type).toBe('syn_flood');
    expect(attack.top_sources.map((s) => s.address).sort()).toEqual([...attackers].sort());
    expect(attack.exporters.map((e) => e.exporter)).toEqual([address]);
  });
});
