import { spawn, type ChildProcessByStdio } from 'node:child_process';
import dgram from 'node:dgram';
import type { Readable } from 'node:stream';
import { goflow2BinaryName, requireExecutable } from '../../engines/binaries';
import { loadConfig } from '../../service/config';
import { decodeFlowMessage, FlowMessageFramer } from '../../workers/collector/flow-message-decoder';
import { goflow2Args } from '../../workers/collector/goflow2-process';
import { udpPortsBoundBy } from '../../workers/collector/udp-sockets';
import { freePort } from '../../engines/local-process';
import { decodedDatagrams, goflow2Metrics, residentBytes } from '../support/goflow2-watch';
import { freeUdpPorts, sendDatagrams } from '../support/udp';
import { waitFor } from '../support/wait';

/**
 * GoFlow2 keeps templates, sampling rates and metric series for each UDP
 * source address, and whoever reaches its ports picks source addresses
 * (docs/security/goflow2.md, Report 7). Run with a bound of 200 routers, it is
 * fed NetFlow v9 templates and flows from thousands of loopback addresses
 * (Linux routes all of 127/8 to lo): its memory, its metric series and its
 * template systems stay bounded while every flow is still decoded, and a
 * router evicted meanwhile decodes again once it resends its template.
 */
const maxRouters = 200;
const senders = 4_000;
/** Unbounded (the nettel2 build), GoFlow2 grew by about 285 MB for these senders; bounded, by 7 MB. */
const maxGrowthBytes = 48 * 2 ** 20;

/** A NetFlow v9 datagram: template 256 (IN_BYTES, IN_PKTS) when asked, and a data set of one flow for it. */
function netflowV9(flow: { bytes: number; packets: number }, withTemplate: boolean): Buffer {
  const template = Buffer.alloc(16);
  template.writeUInt16BE(0, 0); // template set
  template.writeUInt16BE(16, 2);
  template.writeUInt16BE(256, 4);
  template.writeUInt16BE(2, 6);
  template.writeUInt32BE((1 << 16) | 4, 8); // IN_BYTES, 4 bytes
  template.writeUInt32BE((2 << 16) | 4, 12); // IN_PKTS, 4 bytes
  const data = Buffer.alloc(12);
  data.writeUInt16BE(256, 0);
  data.writeUInt16BE(12, 2);
  data.writeUInt32BE(flow.bytes, 4);
  data.writeUInt32BE(flow.packets, 8);
  const sets = withTemplate ? [template, data] : [data];
  const header = Buffer.alloc(20);
  header.writeUInt16BE(9, 0);
  header.writeUInt16BE(sets.length, 2);
  header.writeUInt32BE(100_000, 4);
  header.writeUInt32BE(Math.floor(Date.now() / 1000), 8);
  return Buffer.concat([header, ...sets]);
}

/** The i-th sender of a block: 127.block.x.y, never a .0 or .255. */
const sender = (block: number, i: number) => `127.${block}.${Math.floor(i / 250)}.${(i % 250) + 1}`;

/** Distinct values of the router and remote_ip labels in a Prometheus page: GoFlow2's per-router series. */
function routerLabels(page: string): Set<string> {
  return new Set([...page.matchAll(/(?:router|remote_ip)="([^"]*)"/g)].map((m) => m[1]!));
}

/** The sum of a metric's samples that carry a label pair, in a Prometheus page. */
function labelledSum(page: string, name: string, label: string): number {
  let sum = 0;
  for (const line of page.split('\n')) if (line.startsWith(`${name}{`) && line.includes(label)) sum += Number(line.slice(line.lastIndexOf(' ') + 1));
  return sum;
}

describe('GoFlow2 fed datagrams from thousands of source addresses', () => {
  let child: ChildProcessByStdio<null, Readable, Readable>;
  let netflowPort: number;
  let metricsPort: number;
  /** Bytes of each decoded flow, by the address of the router that sent it. */
  const flowsBy = new Map<string, number[]>();
  let flowCount = 0;

  beforeAll(async () => {
    const config = loadConfig(process.env);
    const binary = config.collector.goflow2 ?? requireExecutable(goflow2BinaryName, [config.toolsDir, ...config.binPath], 'run the set-up');
    const [netflow, sflow] = await freeUdpPorts(2);
    netflowPort = netflow!;
    metricsPort = await freePort();
    const args = goflow2Args({ binary, host: '127.0.0.1', netflowPort, sflowPort: sflow!, metricsPort, workers: 2, queueSize: 100_000 });
    child = spawn(binary, [...args, `-routers.max=${maxRouters}`], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (text: string) => (stderr += text));
    const framer = new FlowMessageFramer();
    child.stdout.on('data', (chunk: Buffer) =>
      framer.push(chunk, (message) => {
        const flow = decodeFlowMessage(message);
        const router = [...(flow.samplerAddress ?? [])].join('.');
        flowsBy.set(router, [...(flowsBy.get(router) ?? []), flow.bytes]);
        flowCount += 1;
      }),
    );
    await waitFor(
      async () => {
        if (child.exitCode !== null) throw new Error(`GoFlow2 exited with ${child.exitCode}: ${stderr.trim()}`);
        return (await udpPortsBoundBy(child.pid!))?.has(netflowPort) ? true : undefined;
      },
      15_000,
      'GoFlow2 to bind its NetFlow port',
    );
  });

  afterAll(async () => {
    if (!child || child.exitCode !== null) return;
    const closed = new Promise((resolve) => child.once('close', resolve));
    child.kill('SIGTERM');
    await closed;
  });

  /** Sends one datagram from each address, 100 at a time, each batch once GoFlow2 has decoded the one before's flows. */
  async function sendFromEach(addresses: string[], datagram: () => Buffer, onBatch?: (sent: number) => void): Promise<void> {
    for (let i = 0; i < addresses.length; i += 100) {
      const batch = addresses.slice(i, i + 100);
      const before = flowCount;
      await Promise.all(batch.map((address) => sendDatagrams(address, netflowPort, [datagram()])));
      await waitFor(() => Promise.resolve(flowCount - before >= batch.length ? true : undefined), 20_000, `the flows of senders ${i + 1} to ${i + batch.length}`);
      onBatch?.(i + batch.length);
    }
  }

  test('its memory, metric series and template systems stay bounded while every sender\'s flow is decoded', async () => {
    // The bound is reached first, so what follows would only add to full tables.
    await sendFromEach(Array.from({ length: 2 * maxRouters }, (_, i) => sender(101, i)), () => netflowV9({ bytes: 100, packets: 1 }, true));
    const baseline = residentBytes(child.pid!);

    const flood = Array.from({ length: senders }, (_, i) => sender(102, i));
    await sendFromEach(flood, () => netflowV9({ bytes: 100, packets: 1 }, true), (sent) => {
      const growth = residentBytes(child.pid!) - baseline;
      if (growth > maxGrowthBytes) throw new Error(`GoFlow2 grew by ${Math.round(growth / 2 ** 20)} MB after ${sent} senders`);
    });

    expect(flood.filter((address) => flowsBy.get(address)?.length !== 1)).toEqual([]);
    expect(residentBytes(child.pid!) - baseline).toBeLessThan(maxGrowthBytes);
    const page = await goflow2Metrics(metricsPort);
    expect(routerLabels(page).size).toBeLessThanOrEqual(maxRouters + 1); // the known routers and "other"
    const templates = (await (await fetch(`http://127.0.0.1:${metricsPort}/templates`)).json()) as Record<string, unknown>;
    expect(Object.keys(templates).length).toBeLessThanOrEqual(maxRouters);
  });

  test('datagrams GoFlow2 cannot read count under "other", not under a series for each new source', async () => {
    const before = await goflow2Metrics(metricsPort);
    const garbage = Buffer.from('0007000100000000', 'hex'); // NetFlow v7: not a version GoFlow2 reads
    const sources = Array.from({ length: 2 * maxRouters }, (_, i) => sender(105, i));
    for (let i = 0; i < sources.length; i += 100) await Promise.all(sources.slice(i, i + 100).map((address) => sendDatagrams(address, netflowPort, [garbage])));
    const page = await waitFor(async () => {
      const text = await goflow2Metrics(metricsPort);
      return decodedDatagrams(text) - decodedDatagrams(before) >= sources.length ? text : undefined;
    }, 20_000, `GoFlow2 to read ${sources.length} datagrams`);
    const others = (text: string) => labelledSum(text, 'goflow2_flow_traffic_packets_total', 'remote_ip="other"');
    expect(others(page) - others(before)).toBe(sources.length);
    expect(sources.some((address) => routerLabels(page).has(address))).toBe(false);
  });

  test('a router evicted by newer senders decodes again once it resends its template', async () => {
    // A router keeps its source port: templates are a transport session's (address and port).
    const address = sender(103, 0);
    const router = dgram.createSocket('udp4');
    await new Promise<void>((resolve) => router.bind(0, address, resolve));
    const send = (datagram: Buffer) => new Promise<void>((resolve, reject) => router.send(datagram, netflowPort, '127.0.0.1', (err) => (err ? reject(err) : resolve())));
    try {
      await send(netflowV9({ bytes: 1_000, packets: 10 }, true));
      await waitFor(() => Promise.resolve(flowsBy.get(address)), 10_000, `the first flow of ${address}`);
      await sendFromEach(Array.from({ length: 2 * maxRouters }, (_, i) => sender(104, i)), () => netflowV9({ bytes: 100, packets: 1 }, true));

      // Its template went with it: its next data set is not decoded, and counts as an unknown template.
      await send(netflowV9({ bytes: 2_000, packets: 20 }, false));
      const unknownTemplate = new RegExp(`^goflow2_flow_process_nf_errors_total\\{error="template_not_found",router="${address.replaceAll('.', '\\.')}"\\} 1$`, 'm');
      await waitFor(async () => (unknownTemplate.test(await goflow2Metrics(metricsPort)) || flowsBy.get(address)!.length > 1 ? true : undefined), 10_000, `${address}'s data set to be read`);
      expect(flowsBy.get(address)).toEqual([1_000]);

      await send(netflowV9({ bytes: 3_000, packets: 30 }, true));
      await waitFor(() => Promise.resolve(flowsBy.get(address)!.length > 1 ? true : undefined), 10_000, `the next flow of ${address}`);
      expect(flowsBy.get(address)).toEqual([1_000, 3_000]);
    } finally {
      router.close();
    }
  });
});
