import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { registerExporter, startCollectorStack, storedFlowSums, waitForStoredFlows, type FlowSum } from '../support/collector';
import { softflowdExport } from '../support/flow-exporters';
import { freePort } from '../../engines/local-process';
import { decodedDatagrams, goflow2Metrics, residentBytes } from '../support/goflow2-watch';
import {
  emptyTemplates,
  randomDatagrams,
  sflowAbsurdCounts,
  sflowAgents,
  templateFlood,
  truncatedHeaders,
  zeroLengthTemplateV9,
  zeroSizeTemplates,
} from '../support/hostile-datagrams';
import { netflowV5, type V5Record } from '../support/netflow-v5';
import { writePcap, type PcapFlow } from '../support/pcap';
import type { TestStack } from '../support/test-stack';
import { sendDatagrams } from '../support/udp';
import { waitFor } from '../support/wait';

/**
 * The collector's UDP input fed hostile datagrams (docs/security/goflow2.md
 * says what each did to GoFlow2 before its fixes). Each case sends one kind
 * from an unregistered address while a registered exporter sends known flows,
 * then checks that GoFlow2 finished with every datagram as the same process,
 * its memory and its metrics page bounded, the service healthy, and the
 * exporter's flows stored exactly. GoFlow2 decodes with one worker: a datagram
 * that stalls it stalls collection, and softflowd's templates are read before
 * their data.
 */
const maxResidentBytes = 200 * 1024 * 1024;
const maxMetricsBytes = 1024 * 1024;

const record = (src: string, over: Partial<V5Record> = {}): V5Record => ({ src, dst: '10.2.0.1', bytes: 1000, packets: 10, protocol: 6, srcPort: 40000, dstPort: 443, ...over });

const pcapFlows: PcapFlow[] = [
  { src: '10.90.0.1', dst: '10.91.0.1', protocol: 'tcp', srcPort: 40001, dstPort: 443, packets: 12, payloadBytes: 900 },
  { src: '10.90.0.2', dst: '10.91.0.2', protocol: 'udp', srcPort: 5004, dstPort: 5004, packets: 9, payloadBytes: 160 },
  { src: '2001:db8:90::1', dst: '2001:db8:91::1', protocol: 'tcp', srcPort: 40003, dstPort: 443, packets: 5, payloadBytes: 1200 },
];

type Sum = Omit<FlowSum, 'flows'>;
const sorted = (sums: Sum[]): Sum[] =>
  sums.map((s) => ({ src_ip: s.src_ip, dst_ip: s.dst_ip, protocol: s.protocol, bytes: s.bytes, packets: s.packets })).sort((a, b) => `${a.src_ip} ${a.dst_ip}`.localeCompare(`${b.src_ip} ${b.dst_ip}`));

describe('the collector fed hostile datagrams', () => {
  let t: TestStack;
  let ports: { netflow: number; sflow: number; metrics: number };
  let pid: number;
  let dir: string;
  beforeAll(async () => {
    const metrics = await freePort();
    const s = await startCollectorStack('chdb', { COLLECTOR_WORKERS: '1', COLLECTOR_METRICS_PORT: String(metrics) });
    t = s.t;
    ports = { netflow: s.netflowPort, sflow: s.sflowPort, metrics };
    pid = t.stack.collector!.goflow2Pid!;
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'nettel-fuzz-'));
  });
  afterAll(async () => {
    await t?.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const workspaceWithExporter = async (address: string): Promise<string> => {
    const { key, org_id } = await t.mintKey();
    await registerExporter(t, key, address);
    return org_id;
  };

  /**
   * How many datagrams GoFlow2 has finished with (decoded or refused), or what
   * harmed it: it exited, it passed the memory bound (it is killed then: a
   * runaway GoFlow2 would take the machine's memory while the other tests
   * run), or its metrics page passed its bound.
   */
  async function goflow2Progress(): Promise<{ decoded: number; harm?: undefined } | { harm: string }> {
    if (t.stack.collector?.goflow2Pid !== pid) return { harm: `GoFlow2 is no longer process ${pid}: it exited` };
    const resident = residentBytes(pid);
    if (resident > maxResidentBytes) {
      process.kill(pid, 'SIGKILL');
      return { harm: `GoFlow2 grew to ${Math.round(resident / 2 ** 20)} MB` };
    }
    const page = await goflow2Metrics(ports.metrics);
    if (page.length > maxMetricsBytes) return { harm: `GoFlow2's metrics page grew to ${Math.round(page.length / 1024)} KB` };
    return { decoded: decodedDatagrams(page) };
  }

  /** Waits until GoFlow2 has finished with `count` datagrams more than `before`; fails at once if it was harmed. */
  async function waitForGoFlow2(before: number, count: number): Promise<void> {
    const progress = await waitFor(async () => {
      const p = await goflow2Progress();
      return p.harm !== undefined || p.decoded - before >= count ? p : undefined;
    }, 30_000, `GoFlow2 to finish with ${count} datagrams`);
    if (progress.harm !== undefined) throw new Error(progress.harm);
  }

  /** GoFlow2 is the process it was, small, with a small metrics page, and the service reports healthy. */
  async function expectGoFlow2Unharmed(): Promise<void> {
    expect(t.stack.collector?.goflow2Pid).toBe(pid);
    expect(residentBytes(pid)).toBeLessThan(maxResidentBytes);
    expect((await goflow2Metrics(ports.metrics)).length).toBeLessThan(maxMetricsBytes);
    expect((await t.request('GET', '/healthz')).status).toBe(200);
  }

  /**
   * Sends datagrams `batch` at a time, each batch once GoFlow2 is done with the
   * one before: loopback drops what GoFlow2's socket buffer cannot hold, and
   * every datagram must reach it.
   */
  async function sendInBatches(from: string, port: number, datagrams: Buffer[], batch = 32): Promise<void> {
    for (let i = 0; i < datagrams.length; i += batch) {
      const chunk = datagrams.slice(i, i + batch);
      const before = await goflow2Progress();
      if (before.harm !== undefined) throw new Error(before.harm);
      await sendDatagrams(from, port, chunk);
      await waitForGoFlow2(before.decoded, chunk.length);
    }
  }

  /**
   * Sends the hostile datagrams from `attacker` to `port`, in two halves, with a
   * NetFlow v5 datagram of known flows from `exporter` after each half, and waits
   * until GoFlow2 is done with all of them. Resolves with the exporter's workspace
   * and the sums it must hold.
   */
  async function sendBetweenKnownFlows(hostile: Buffer[], port: number, exporter: string, attacker: string, batch?: number) {
    const orgId = await workspaceWithExporter(exporter);
    const src = (i: number) => `10.7.${exporter.split('.')[3]}.${i}`;
    const known = [netflowV5([record(src(1)), record(src(2), { protocol: 17, dstPort: 53, bytes: 200, packets: 2 })]), netflowV5([record(src(3), { bytes: 3000, packets: 3 })])];
    const half = Math.ceil(hostile.length / 2);
    for (const [datagrams, flows] of [[hostile.slice(0, half), known[0]!], [hostile.slice(half), known[1]!]] as const) {
      await sendInBatches(attacker, port, datagrams, batch);
      await sendInBatches(exporter, ports.netflow, [flows]);
    }
    const expected: FlowSum[] = [
      { src_ip: src(1), dst_ip: '10.2.0.1', protocol: 'tcp', bytes: 1000, packets: 10, flows: 1 },
      { src_ip: src(2), dst_ip: '10.2.0.1', protocol: 'udp', bytes: 200, packets: 2, flows: 1 },
      { src_ip: src(3), dst_ip: '10.2.0.1', protocol: 'tcp', bytes: 3000, packets: 3, flows: 1 },
    ];
    return { orgId, expected };
  }

  /** softflowd (v9 or IPFIX) exports a pcap of known flows from `exporter` while the hostile datagrams are sent; resolves with what its workspace stores and what the pcap holds. */
  async function softflowdDuring(hostile: { port: number; datagrams: Buffer[] }[], exporter: string, attacker: string, version: 9 | 10) {
    const orgId = await workspaceWithExporter(exporter);
    const file = path.join(dir, `${exporter}.pcap`);
    const want = sorted(writePcap(file, pcapFlows));
    await Promise.all([
      softflowdExport({ pcap: file, port: ports.netflow, version, sourceIp: exporter, paceMs: 1 }),
      (async () => {
        for (const h of hostile) await sendInBatches(attacker, h.port, h.datagrams);
      })(),
    ]);
    const packets = want.reduce((n, s) => n + s.packets, 0);
    // Waits for every packet, then compares: a shortfall shows as the difference, not as a time-out.
    await waitFor(async () => ((await storedFlowSums(t, orgId)).reduce((n, s) => n + s.packets, 0) >= packets ? true : undefined), 20_000, `${packets} packets stored`).catch(() => undefined);
    return { stored: sorted(await waitForStoredFlows(t, orgId, 1)), want };
  }

  test('the 36-byte NetFlow v9 datagram of a 0-byte template and its data set is refused, and collection goes on', async () => {
    const { orgId, expected } = await sendBetweenKnownFlows([zeroLengthTemplateV9()], ports.netflow, '127.0.7.1', '127.0.8.1');
    expect(await waitForStoredFlows(t, orgId, 3)).toEqual(expected);
    await expectGoFlow2Unharmed();
  });

  test('IPFIX, field-less and options templates of 0-byte records are refused, and collection goes on', async () => {
    const { orgId, expected } = await sendBetweenKnownFlows(zeroSizeTemplates(), ports.netflow, '127.0.7.2', '127.0.8.2');
    expect(await waitForStoredFlows(t, orgId, 3)).toEqual(expected);
    await expectGoFlow2Unharmed();
  });

  test('truncated headers and empty or oversized templates are refused, and collection goes on', async () => {
    const { orgId, expected } = await sendBetweenKnownFlows([...truncatedHeaders(), ...emptyTemplates()], ports.netflow, '127.0.7.3', '127.0.8.3');
    expect(await waitForStoredFlows(t, orgId, 3)).toEqual(expected);
    await expectGoFlow2Unharmed();
  });

  test('sFlow datagrams with absurd sample and record counts are refused without allocating for them', async () => {
    const { orgId, expected } = await sendBetweenKnownFlows(sflowAbsurdCounts(), ports.sflow, '127.0.7.4', '127.0.8.4');
    expect(await waitForStoredFlows(t, orgId, 3)).toEqual(expected);
    await expectGoFlow2Unharmed();
  });

  test('sFlow datagrams naming 20,000 different agents leave GoFlow2\'s metrics page small', async () => {
    const { orgId, expected } = await sendBetweenKnownFlows(sflowAgents(20_000), ports.sflow, '127.0.7.5', '127.0.8.5', 200);
    expect(await waitForStoredFlows(t, orgId, 3)).toEqual(expected);
    await expectGoFlow2Unharmed();
  });

  test('a flood of 1,440,000 templates from one sender leaves GoFlow2 small and another exporter\'s templates working', async () => {
    const { stored, want } = await softflowdDuring([{ port: ports.netflow, datagrams: templateFlood(1, 8_000) }], '127.0.7.6', '127.0.8.6', 10);
    expect(stored).toEqual(want);
    await expectGoFlow2Unharmed();
  });

  test('3,000 seeded random datagrams beside a real exporter leave its flows exact and GoFlow2 unharmed', async () => {
    const noise = randomDatagrams(18, 3_000);
    const hostile = [
      { port: ports.netflow, datagrams: noise.slice(0, 1_500) },
      { port: ports.sflow, datagrams: noise.slice(1_500) },
    ];
    const { stored, want } = await softflowdDuring(hostile, '127.0.7.7', '127.0.8.7', 9);
    expect(stored).toEqual(want);
    await expectGoFlow2Unharmed();
  });
});
