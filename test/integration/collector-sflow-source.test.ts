import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { metricTotal } from '../support/metrics';
import type { DataOf, UnknownExporterView } from '../support/api-types';
import { registerExporter, startCollectorStack, storedFlowSums, waitForStoredFlows, type FlowSum } from '../support/collector';
import { pmacctExport } from '../support/flow-exporters';
import { writePcap, type ExpectedFlow, type PcapFlow } from '../support/pcap';
import type { TestStack } from '../support/test-stack';
import { waitFor } from '../support/wait';
import { storedCount } from '../support/stored-count';

/**
 * sFlow is routed by the UDP source of its datagrams, as NetFlow and IPFIX
 * are, never by the agent address a datagram claims (issue 18, item 4;
 * docs/security/goflow2.md). pmacct's sfprobe plays the exporters: it writes
 * whatever agent address it is given into every datagram.
 */
const pcapFlows: PcapFlow[] = [
  { src: '10.60.0.1', dst: '10.61.0.1', protocol: 'tcp', srcPort: 40001, dstPort: 443, packets: 12, payloadBytes: 900 },
  { src: '10.60.0.2', dst: '10.61.0.2', protocol: 'udp', srcPort: 5004, dstPort: 5004, packets: 9, payloadBytes: 160 },
  { src: '2001:db8:60::1', dst: '2001:db8:61::1', protocol: 'tcp', srcPort: 40003, dstPort: 443, packets: 5, payloadBytes: 1200 },
];
const packets = pcapFlows.reduce((n, f) => n + f.packets, 0);

type Sum = Omit<FlowSum, 'flows'>;
const ordered = (sums: Sum[]): Sum[] =>
  sums
    .map((s) => ({ src_ip: s.src_ip, dst_ip: s.dst_ip, protocol: s.protocol, bytes: s.bytes, packets: s.packets }))
    .sort((a, b) => `${a.src_ip} ${a.dst_ip}`.localeCompare(`${b.src_ip} ${b.dst_ip}`));
/** What sfprobe reports of the pcap: every packet sampled, as a whole frame (IP bytes + 18 a packet). */
const sflowSums = (flows: ExpectedFlow[]): Sum[] => ordered(flows.map((f) => ({ ...f, bytes: f.bytes + 18 * f.packets })));

describe('sFlow routed by source address', () => {
  let t: TestStack;
  let sflowPort: number;
  let dir: string;
  beforeAll(async () => {
    const s = await startCollectorStack('chdb');
    t = s.t;
    sflowPort = s.sflowPort;
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'nettel-sflow-'));
  });
  afterAll(async () => {
    await t?.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const metric = (name: string) => metricTotal(t.stack.registry, name);
  /** Flows the collector has routed so far: published to a workspace, or dropped for an unregistered exporter. */
  const routedFlows = async () =>
    (await metric('nettel_collector_flows_accepted_total')) +
    (((await t.stack.registry.getSingleMetric('nettel_collector_dropped_flows_total')?.get())?.values ?? []).find((v) => v.labels.reason === 'unregistered_exporter')?.value ?? 0);
  const unknownExporter = async (address: string) =>
    (await t.request<DataOf<UnknownExporterView>>('GET', '/v1/exporters/unknown', { key: t.adminKey })).body.data.find((r) => r.address === address);

  describe('an exporter at 127.0.0.1 claiming the agent address of another workspace\'s router', () => {
    let victim: string;
    let mismatchesBefore: number;
    beforeAll(async () => {
      const { key, org_id } = await t.mintKey();
      victim = org_id;
      await registerExporter(t, key, '127.0.6.1');
      mismatchesBefore = await metric('nettel_collector_sflow_agent_mismatch_total');
      const routedBefore = await routedFlows();
      const file = path.join(dir, 'claiming.pcap');
      writePcap(file, pcapFlows);
      // No relay: pmacctd sends from 127.0.0.1 itself, with 127.0.6.1 as the agent in every datagram.
      await pmacctExport({ pcap: file, port: sflowPort, plugin: 'sfprobe', agentIp: '127.0.6.1' });
      await waitFor(async () => ((await routedFlows()) - routedBefore >= packets ? true : undefined), 20_000, `${packets} flows to reach the collector`);
    });

    test('nothing is stored in that workspace', async () => {
      expect(await storedFlowSums(t, victim)).toEqual([]);
      expect(await storedCount(t.stack.clickhouse, 'flows', `${t.stack.clickhouse.dialect.addressText('exporter')} = '127.0.6.1'`)).toBe(0);
    });

    test('its flows are counted under its own address among the unknown exporters', async () => {
      const listed = await waitFor(async () => {
        const row = await unknownExporter('127.0.0.1');
        return row && row.flows >= packets && row.datagrams >= 1 ? row : undefined;
      }, 15_000, '127.0.0.1 among unknown exporters');
      expect(listed.flows).toBe(packets);
      expect(await unknownExporter('127.0.6.1')).toBeUndefined();
    });

    test('each of its datagrams raises the agent-mismatch counter', async () => {
      // Both counts come from GoFlow2's counters, read every 2 s: waits until they agree.
      const counted = await waitFor(async () => {
        const datagrams = (await unknownExporter('127.0.0.1'))?.datagrams ?? 0;
        const mismatches = (await metric('nettel_collector_sflow_agent_mismatch_total')) - mismatchesBefore;
        return datagrams >= 1 && mismatches === datagrams ? mismatches : undefined;
      }, 15_000, 'a mismatch counted for each datagram of 127.0.0.1');
      expect(counted).toBeGreaterThanOrEqual(1);
    });
  });

  test('an honest sFlow exporter, its agent address its source address, lands in its own workspace with exact sums', async () => {
    const { key, org_id } = await t.mintKey();
    await registerExporter(t, key, '127.0.6.2');
    const file = path.join(dir, 'honest.pcap');
    const want = sflowSums(writePcap(file, pcapFlows));
    await pmacctExport({ pcap: file, port: sflowPort, plugin: 'sfprobe', agentIp: '127.0.6.2', sourceIp: '127.0.6.2', paceMs: 1 });
    // Waits for every packet, then compares: a shortfall shows as the difference, not as a time-out.
    await waitFor(async () => ((await storedFlowSums(t, org_id)).reduce((n, s) => n + s.packets, 0) >= packets ? true : undefined), 20_000, `${packets} packets stored`).catch(() => undefined);
    expect(ordered(await waitForStoredFlows(t, org_id, 1))).toEqual(want);
  });
});
