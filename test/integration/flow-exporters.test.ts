import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { DataOf, UnknownExporterView } from '../support/api-types';
import { registerExporter, startCollectorStack, waitForStoredFlows, type FlowSum } from '../support/collector';
import { nfreplayExport, pmacctExport, softflowdExport, type ExportResult } from '../support/flow-exporters';
import { periodicSample, writePcap, type ExpectedFlow, type PcapFlow } from '../support/pcap';
import { transports, type TestStack } from '../support/test-stack';
import { waitFor } from '../support/wait';
import { storedCount } from '../support/stored-count';

/**
 * Real exporters no one here wrote (softflowd, pmacct's nfprobe and sfprobe,
 * nfdump's nfreplay) read a pcap of known packets and send NetFlow v5/v9,
 * IPFIX and sFlow to the running collector; what each workspace stores is
 * compared with what the pcap holds. Each case plays its exporter from its
 * own loopback address, through a relay. GoFlow2 decodes with one worker
 * here: with more, data sent right behind its template may be decoded before
 * the template and lost, as at any exporter's start (docs/sending-flows.md, "NetFlow v5/v9, IPFIX, sFlow: the
 * collector"), which would make exact sums a matter of luck.
 */
const pcapFlows: PcapFlow[] = [
  { src: '10.10.0.1', dst: '10.20.0.1', protocol: 'tcp', srcPort: 40001, dstPort: 443, packets: 12, payloadBytes: 900 },
  { src: '10.10.0.2', dst: '10.20.0.1', protocol: 'tcp', srcPort: 40002, dstPort: 80, packets: 7, payloadBytes: 300 },
  { src: '10.10.0.3', dst: '10.20.0.2', protocol: 'udp', srcPort: 5004, dstPort: 5004, packets: 9, payloadBytes: 160 },
  { src: '10.10.0.4', dst: '10.20.0.3', protocol: 'icmp', packets: 3, payloadBytes: 56 },
  { src: '2001:db8:10::1', dst: '2001:db8:20::1', protocol: 'tcp', srcPort: 40003, dstPort: 443, packets: 5, payloadBytes: 1200 },
  { src: '2001:db8:10::2', dst: '2001:db8:20::2', protocol: 'udp', srcPort: 4500, dstPort: 4500, packets: 4, payloadBytes: 200 },
];

type Sum = Omit<FlowSum, 'flows'>;
const key = (s: Sum) => `${s.src_ip} ${s.dst_ip} ${s.protocol}`;
const byKey = (sums: Sum[]) => sums.map((s) => ({ src_ip: s.src_ip, dst_ip: s.dst_ip, protocol: s.protocol, bytes: s.bytes, packets: s.packets })).sort((a, b) => key(a).localeCompare(key(b)));

/** The pcap's sums as an exporter reports them, times the sampling rate; sFlow samples whole frames (+18 bytes a packet). */
function expectedSums(flows: ExpectedFlow[], opts: { rate?: number; frameBytes?: number } = {}): Sum[] {
  const rate = opts.rate ?? 1;
  return byKey(
    flows.map((f) => ({ src_ip: f.src_ip, dst_ip: f.dst_ip, protocol: f.protocol, bytes: (f.bytes + (opts.frameBytes ?? 0) * f.packets) * rate, packets: f.packets * rate })),
  );
}

interface ExporterCase {
  name: string;
  /** NetFlow v5 carries IPv4 only. */
  ipv4Only?: boolean;
  registeredRate?: number;
  expected(flows: ExpectedFlow[]): Sum[];
  run(opts: { pcap: string; netflowPort: number; sflowPort: number; address: string }): Promise<ExportResult>;
}

const pace = 1;
const cases: ExporterCase[] = [
  { name: 'softflowd NetFlow v5', ipv4Only: true, expected: (f) => expectedSums(f), run: (o) => softflowdExport({ pcap: o.pcap, port: o.netflowPort, version: 5, sourceIp: o.address, paceMs: pace }) },
  { name: 'softflowd NetFlow v9', expected: (f) => expectedSums(f), run: (o) => softflowdExport({ pcap: o.pcap, port: o.netflowPort, version: 9, sourceIp: o.address, paceMs: pace }) },
  { name: 'softflowd IPFIX', expected: (f) => expectedSums(f), run: (o) => softflowdExport({ pcap: o.pcap, port: o.netflowPort, version: 10, sourceIp: o.address, paceMs: pace }) },
  {
    name: 'softflowd IPFIX sampling 1 in 4',
    expected: (f) => expectedSums(periodicSample(f, 4), { rate: 4 }),
    run: (o) => softflowdExport({ pcap: o.pcap, port: o.netflowPort, version: 10, samplingRate: 4, sourceIp: o.address, paceMs: pace }),
  },
  {
    name: 'softflowd NetFlow v9 sampling 1 in 4',
    expected: (f) => expectedSums(periodicSample(f, 4), { rate: 4 }),
    run: (o) => softflowdExport({ pcap: o.pcap, port: o.netflowPort, version: 9, samplingRate: 4, sourceIp: o.address, paceMs: pace }),
  },
  { name: 'pmacctd nfprobe NetFlow v9', expected: (f) => expectedSums(f), run: (o) => pmacctExport({ pcap: o.pcap, port: o.netflowPort, plugin: 'nfprobe', version: 9, sourceIp: o.address, paceMs: pace }) },
  {
    name: 'pmacctd nfprobe IPFIX, with a rate the workspace registered',
    registeredRate: 10,
    expected: (f) => expectedSums(f, { rate: 10 }),
    run: (o) => pmacctExport({ pcap: o.pcap, port: o.netflowPort, plugin: 'nfprobe', version: 10, sourceIp: o.address, paceMs: pace }),
  },
  { name: 'pmacctd sfprobe sFlow', expected: (f) => expectedSums(f, { frameBytes: 18 }), run: (o) => pmacctExport({ pcap: o.pcap, port: o.sflowPort, plugin: 'sfprobe', agentIp: o.address, sourceIp: o.address, paceMs: pace }) },
  { name: 'nfreplay NetFlow v5', ipv4Only: true, expected: (f) => expectedSums(f), run: (o) => nfreplayExport({ pcap: o.pcap, port: o.netflowPort, version: 5, sourceIp: o.address, paceMs: pace }) },
  { name: 'nfreplay NetFlow v9', expected: (f) => expectedSums(f), run: (o) => nfreplayExport({ pcap: o.pcap, port: o.netflowPort, version: 9, sourceIp: o.address, paceMs: pace }) },
];

describe.each(transports)('real flow exporters to the collector on %s', (transport) => {
  let t: TestStack;
  let ports: { netflowPort: number; sflowPort: number };
  let dir: string;
  beforeAll(async () => {
    const s = await startCollectorStack(transport, { COLLECTOR_WORKERS: '1' });
    t = s.t;
    ports = { netflowPort: s.netflowPort, sflowPort: s.sflowPort };
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'nettel-pcap-'));
  });
  afterAll(async () => {
    await t?.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  /** A pcap of its own for each case: exporters keep packet times, and each case's packets are recent. */
  const pcapFor = (name: string, flows: PcapFlow[]) => {
    const file = path.join(dir, `${name.replace(/\W+/g, '-')}.pcap`);
    return { file, expected: writePcap(file, flows) };
  };

  test.each(cases.map((c, i) => [c.name, c, i] as const))('%s: the stored sums are what the pcap holds', async (_name, c, i) => {
    const flows = c.ipv4Only ? pcapFlows.filter((f) => !f.src.includes(':')) : pcapFlows;
    const { file, expected } = pcapFor(c.name, flows);
    const { key: apiKey, org_id } = await t.mintKey();
    const address = `127.0.3.${i + 1}`;
    await registerExporter(t, apiKey, address, c.registeredRate);
    await c.run({ pcap: file, ...ports, address });
    const want = c.expected(expected);
    const total = want.reduce((n, s) => n + s.packets, 0);
    // Waits for every packet, then compares: a shortfall shows as the difference, not as a time-out.
    await waitFor(async () => {
      const stored = await waitForStoredFlows(t, org_id, 1);
      return stored.reduce((n, s) => n + s.packets, 0) >= total ? true : undefined;
    }, 20_000, `${c.name}: ${total} packets stored`).catch(() => undefined);
    expect(byKey(await waitForStoredFlows(t, org_id, 1))).toEqual(want);
  });

  test('two workspaces with their own exporters see only their own flows; an unregistered exporter is listed, not stored', async () => {
    const a = await t.mintKey();
    const b = await t.mintKey();
    await registerExporter(t, a.key, '127.0.4.1');
    await registerExporter(t, b.key, '127.0.4.2');
    const pa = pcapFor('isolation-a', [pcapFlows[0]!]);
    const pb = pcapFor('isolation-b', [pcapFlows[2]!]);
    const pc = pcapFor('isolation-c', [pcapFlows[1]!]);
    await softflowdExport({ pcap: pa.file, port: ports.netflowPort, version: 10, sourceIp: '127.0.4.1', paceMs: pace });
    await softflowdExport({ pcap: pb.file, port: ports.netflowPort, version: 10, sourceIp: '127.0.4.2', paceMs: pace });
    await softflowdExport({ pcap: pc.file, port: ports.netflowPort, version: 10, sourceIp: '127.0.4.3', paceMs: pace });
    expect(byKey(await waitForStoredFlows(t, a.org_id, 1))).toEqual(expectedSums(pa.expected));
    expect(byKey(await waitForStoredFlows(t, b.org_id, 1))).toEqual(expectedSums(pb.expected));
    const unknown = await waitFor(async () => {
      const res = await t.request<DataOf<UnknownExporterView>>('GET', '/v1/exporters/unknown', { key: t.adminKey });
      // Flows are counted as decoded, datagrams as GoFlow2's counters are read (every 2 s).
      return res.body.data.find((r) => r.address === '127.0.4.3' && r.flows >= 1 && r.datagrams >= 1);
    }, 15_000, '127.0.4.3 listed as unknown');
    expect(unknown.flows).toBe(1);
    expect(await storedCount(t.stack.clickhouse, 'flows', `${t.stack.clickhouse.dialect.addressText('exporter')} = '127.0.4.3'`)).toBe(0);
  });
});
