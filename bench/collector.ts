import { spawn } from 'node:child_process';
import dgram from 'node:dgram';
import fs from 'node:fs';
import { goflow2BinaryName, requireExecutable } from '../engines/binaries';
import { freePort } from '../engines/local-process';
import type { Config } from '../service/config';
import { registerApprovedExporter } from '../test/support/exporters';
import { call, mintKey, storedFlows } from './client';
import { benchDestinations, encodeMixed, FlowExporter, type Datagrams } from './netflow-datagrams';
import { peakRssMib, type BenchStack } from './stack';
import { udpPortsBoundBy } from '../workers/collector/udp-sockets';
import { samples, settle, settleStored, total } from './settle';

/**
 * The collector scenario: pre-encoded NetFlow v9 and IPFIX datagrams (half
 * each, interleaved, from one UDP socket on loopback) offered to the
 * service's collector at increasing rates, each timed until the flows the
 * collector published are stored (bench/settle.ts); beside it, GoFlow2 alone decoding the same datagrams
 * to /dev/null, in the binary format the collector reads and in JSON.
 */
export interface CollectorSizes {
  /** GoFlow2 alone: the first offered rate per output format, doubled each step of `aloneSeconds` until it no longer keeps up. */
  aloneFirstRate: { bin: number; json: number };
  aloneSeconds: number;
  /** Offered rates through the service, flows/s, each for `seconds`; the stored count resting `quietMs` ends a rate's wait. */
  rates: number[];
  seconds: number;
  quietMs: number;
}

export const collectorSizes: Record<'quick' | 'full', CollectorSizes> = {
  quick: { aloneFirstRate: { bin: 100_000, json: 5_000 }, aloneSeconds: 1, rates: [50_000, 150_000], seconds: 1, quietMs: 2_000 },
  full: { aloneFirstRate: { bin: 50_000, json: 5_000 }, aloneSeconds: 3, rates: [50_000, 100_000, 150_000, 200_000, 300_000], seconds: 10, quietMs: 3_000 },
};

const loopback = '127.0.0.1';
const sendWindow = 64;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const wholeSecond = () => Math.floor(Date.now() / 1000) * 1000;

export const goflow2Binary = (config: Config) =>
  config.collector.goflow2 ?? requireExecutable(goflow2BinaryName, [config.toolsDir, ...config.binPath], 'run `npm run bench` (its set-up builds GoFlow2) or set GOFLOW2');

/** One exporter per protocol; both carry their sequence numbers across encodings. */
function exporters() {
  const bootMs = Date.now() - 3_600_000;
  return { v9: new FlowExporter('netflow9', { domainId: 1, templateEvery: 1000, bootMs }), ipfix: new FlowExporter('ipfix', { domainId: 2, templateEvery: 1000, bootMs }) };
}

async function openSender(): Promise<dgram.Socket> {
  const socket = dgram.createSocket({ type: 'udp4', sendBufferSize: 4 * 1024 * 1024 });
  await new Promise<void>((resolve) => socket.bind(0, loopback, resolve));
  return socket;
}

/**
 * Sends d's datagrams from `from` on, in order, at most `sendWindow` awaiting
 * their callback (dgram's send is asynchronous); with `rate`, no faster than
 * that many flows/s, in bursts of what the last millisecond or so allowed.
 */
function send(socket: dgram.Socket, port: number, d: Datagrams, from = 0, rate?: number) {
  const startedAt = performance.now();
  let next = from;
  let inFlight = 0;
  let offered = 0;
  let errors = 0;
  let timer = false;
  return new Promise<{ startedAt: number; endedAt: number; errors: number }>((resolve) => {
    const finish = () => resolve({ startedAt, endedAt: performance.now(), errors });
    const done = (err: Error | null) => {
      inFlight -= 1;
      if (err) errors += 1;
      if (next >= d.datagrams.length) {
        if (inFlight === 0) finish();
      } else if (!timer) pump();
    };
    const pump = () => {
      timer = false;
      const budget = rate ? ((performance.now() - startedAt) / 1000) * rate : Infinity;
      while (next < d.datagrams.length && inFlight < sendWindow && offered <= budget) {
        offered += d.flows[next]!;
        inFlight += 1;
        socket.send(d.datagrams[next++]!, port, loopback, done);
      }
      if (next < d.datagrams.length && inFlight < sendWindow) {
        timer = true;
        setTimeout(pump, 1);
      } else if (inFlight === 0) finish();
    };
    pump();
  });
}

/** The kernel's count of UDP datagrams dropped on a full receive buffer (all sockets of this host). */
function udpRcvbufErrors(): number {
  const [names, values] = fs.readFileSync('/proc/net/snmp', 'utf8').split('\n').filter((l) => l.startsWith('Udp:')).map((l) => l.split(/\s+/));
  return Number(values?.[names?.indexOf('RcvbufErrors') ?? -1] ?? NaN);
}

/** CPU seconds (user + system, at 100 ticks a second) a process used so far. */
const cpuSeconds = (pid: number) =>
  fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ').slice(11, 13).reduce((n, ticks) => n + Number(ticks) / 100, 0);

/** Sends the leading template datagrams, then waits for GoFlow2's decoders to hold them; the index of the first data datagram. */
async function sendTemplates(socket: dgram.Socket, port: number, d: Datagrams): Promise<number> {
  const first = Math.max(0, d.flows.findIndex((n) => n > 0));
  await send(socket, port, { datagrams: d.datagrams.slice(0, first), flows: d.flows.slice(0, first), total: 0 });
  await sleep(200);
  return first;
}

/** A GoFlow2 alone: its UDP port and pid, the sender's socket, a reading of its metrics. */
interface Alone { port: number; pid: number; socket: dgram.Socket; read: () => Promise<Map<string, number>> }

/** One offered rate at GoFlow2 alone: its decoded flows/s (to the last decoded record) and loss. */
async function aloneStep(a: Alone, d: Datagrams, rate: number, first: number) {
  const records = async () => total(await a.read(), 'goflow2_flow_process_nf_flowset_records_total', 'type="DataFlowSet"');
  const before = { records: await records(), kernel: udpRcvbufErrors() };
  const sent = await send(a.socket, a.port, d, first, rate);
  const decoded = await settle(async () => (await records()) - before.records, { target: d.total, quietMs: 300, intervalMs: 25, timeoutMs: 120_000 });
  return {
    offered_flows_per_s: rate,
    sent: d.total,
    decoded: decoded.value,
    decoded_flows_per_s: Math.round(decoded.value / ((decoded.at - sent.startedAt) / 1000)),
    loss_pct: Math.round(((d.total - decoded.value) / d.total) * 100_000) / 1000,
    kernel_dropped_datagrams: udpRcvbufErrors() - before.kernel,
  };
}

/**
 * GoFlow2 alone, the same binary and listener options as the collector's,
 * its output to /dev/null: the datagrams offered paced (as to the service),
 * the rate doubled while it keeps up; its rate is the most flows/s it
 * decoded (its Prometheus counter of data records) in any step.
 */
async function goflow2Alone(binary: string, format: 'bin' | 'json', sizes: CollectorSizes, c: Config['collector']) {
  const port = await freePort();
  const metricsPort = await freePort();
  const query = `count=1&workers=${c.workers}&blocking=false&queue_size=${c.queueSize}`;
  const args = [`-listen=netflow://${loopback}:${port}/?${query}`, `-format=${format}`, '-transport=file', '-transport.file=/dev/null', `-addr=${loopback}:${metricsPort}`, '-loglevel=warn'];
  // bin as the collector runs it (length-delimited, no separator); JSON needs its newline.
  if (format === 'bin') args.push('-transport.file.sep=');
  const child = spawn(binary, args, { stdio: ['ignore', 'ignore', 'inherit'] });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  const a: Alone = { port, pid: child.pid!, socket: await openSender(), read: async () => samples(await (await fetch(`http://${loopback}:${metricsPort}/metrics`)).text()) };
  try {
    // Up once its metrics answer and the kernel holds its UDP socket (a datagram sent before the bind is lost), within 10 s.
    const up = async () => (await a.read().then(() => true, () => false)) && ((await udpPortsBoundBy(a.pid))?.has(port) ?? true);
    for (let i = 0; !(await up()); i += 1) await (i > 200 ? Promise.reject(new Error('GoFlow2 alone did not start within 10 s')) : new Promise((r) => setTimeout(r, 50)));
    const { v9, ipfix } = exporters();
    const cpu = cpuSeconds(a.pid);
    const steps = [];
    for (let rate = sizes.aloneFirstRate[format], next = 0; steps.length < 6; rate *= 2) {
      const d = encodeMixed(v9, ipfix, next, Math.round(rate * sizes.aloneSeconds), wholeSecond());
      next += d.total;
      const step = await aloneStep(a, d, rate, steps.length ? 0 : await sendTemplates(a.socket, port, d));
      steps.push(step);
      if (step.loss_pct >= 1 || step.decoded_flows_per_s < 0.8 * rate) break;
    }
    const decoded = steps.reduce((n, st) => n + st.decoded, 0);
    const lossless = steps.filter((st) => st.loss_pct < 0.1).map((st) => st.decoded_flows_per_s);
    return {
      flows_per_s: Math.max(...steps.map((st) => st.decoded_flows_per_s)),
      lossless_flows_per_s: lossless.length ? Math.max(...lossless) : 0,
      cpu_us_per_flow: Math.round(((cpuSeconds(a.pid) - cpu) / decoded) * 1e7) / 10,
      steps,
    };
  } finally {
    a.socket.close();
    child.kill('SIGTERM');
    await exited;
  }
}

interface Through extends ReturnType<typeof exporters> {
  stack: BenchStack;
  socket: dgram.Socket;
  nextFlow: number;
  stored: () => Promise<number>;
  metrics: () => Promise<Map<string, number>>;
}

/** Flows of the next `flows`, encoded before any is sent. */
function nextDatagrams(t: Through, flows: number): Datagrams {
  const d = encodeMixed(t.v9, t.ipfix, t.nextFlow, flows, wholeSecond());
  t.nextFlow += flows;
  return d;
}

/** Registers the sender's address in a fresh workspace (approved by the platform admin), then sends a little until its flows are stored (the collector reads the registry every few seconds). */
async function registerSender(stack: BenchStack, socket: dgram.Socket): Promise<Through> {
  const operator = await mintKey(stack.url, stack.adminKey, { role: 'operator' });
  await registerApprovedExporter({ adminKey: stack.adminKey, request: (m, r, o) => call(stack.url, m, r, o.key, o.body) }, operator.key, { address: loopback, name: 'bench sender' });
  const from = Date.now() - 120_000;
  const metrics = async () => {
    // The platform admin key reads /metrics (api/deps.ts metricsToken); an answer without them fails the scenario rather than counting nothing.
    const res = await fetch(`${stack.url}/metrics`, { headers: { authorization: `Bearer ${stack.adminKey}` } });
    if (res.status !== 200) throw new Error(`the service's /metrics answered ${res.status}`);
    return samples(await res.text());
  };
  const t: Through = { stack, socket, ...exporters(), nextFlow: 0, stored: () => storedFlows(stack.url, operator.key, from, Date.now() + 120_000), metrics };
  const deadline = Date.now() + 60_000;
  while ((await t.stored()) === 0) {
    if (Date.now() > deadline) throw new Error('the collector stored none of the sender\'s flows');
    await send(socket, stack.collectorPorts.netflow, nextDatagrams(t, 54));
    await sleep(250);
  }
  await settle(t.stored, { target: Infinity, quietMs: 1_000, intervalMs: 100, timeoutMs: 30_000 });
  return t;
}

/** What the service counted between two readings of its /metrics: the collector's counters, the rate detectors' flows and decisions (none: the traffic is no attack), and the rows the workers wrote. */
const countedBetween = (before: Map<string, number>, after: Map<string, number>) =>
  Object.fromEntries(
    [...after].filter(([k, v]) => /^nettel_(collector_.*_total|detection_(decisions|flows)_total|worker_rows_written_total|worker_batches_total|worker_clickhouse_write_seconds_(sum|count)|worker_write_batch_rows_(sum|count))/.test(k) && v !== (before.get(k) ?? 0)).map(([k, v]) => [k, v - (before.get(k) ?? 0)]),
  );

/** Peak RSS of the service's GoFlow2 (the collector process's child), in MiB. */
function serviceGoflow2RssMib(stack: BenchStack): number | undefined {
  const pid = stack.processes.find((p) => p.role.includes('collector'))?.child.pid;
  const children = pid ? fs.readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(' ') : [];
  const goflow2 = children.find((c) => c && fs.readFileSync(`/proc/${c}/comm`, 'utf8').startsWith('goflow2'));
  return goflow2 ? peakRssMib(Number(goflow2)) : undefined;
}

/** One offered rate: its flows sent paced, then followed until the collector published them and the writers stored them. */
async function atRate(t: Through, rate: number, sizes: CollectorSizes) {
  const d = nextDatagrams(t, Math.round(rate * sizes.seconds));
  const before = { stored: await t.stored(), metrics: await t.metrics(), kernel: udpRcvbufErrors() };
  const sent = await send(t.socket, t.stack.collectorPorts.netflow, d, 0, rate);
  const { stored, accepted } = await settleStored(t, before, d.total, sizes.quietMs);
  // The collector reads GoFlow2's counters (datagrams, its drops) every 2 s: one more reading before the counts are taken.
  await sleep(Math.max(0, 2_200 - (performance.now() - sent.endedAt)));
  return {
    offered_flows_per_s: rate,
    sent: d.total,
    datagrams: d.datagrams.length,
    sent_flows_per_s: Math.round(d.total / ((sent.endedAt - sent.startedAt) / 1000)),
    send_errors: sent.errors,
    stored: stored.value,
    stored_flows_per_s: Math.round(stored.value / ((stored.at - sent.startedAt) / 1000)),
    loss_pct: Math.round(((d.total - stored.value) / d.total) * 100_000) / 1000,
    accepted,
    lost_after_acceptance: accepted - stored.value,
    drain_s: Math.round(stored.at - sent.endedAt) / 1000,
    kernel_dropped_datagrams: udpRcvbufErrors() - before.kernel,
    counted: countedBetween(before.metrics, await t.metrics()),
  };
}

/**
 * The scenario. `collector_flows_per_s` is the highest stored rate whose loss
 * is under 0.1 % (else the lowest rate's), `collector_loss_pct` that rate's loss.
 */
export async function collectorScenario(stack: BenchStack, config: Config, sizes: CollectorSizes, log: (msg: string) => void) {
  const binary = goflow2Binary(config);
  log(`GoFlow2 alone: NetFlow v9 + IPFIX to /dev/null at doubling rates, -format=bin then -format=json`);
  const bin = await goflow2Alone(binary, 'bin', sizes, config.collector);
  const json = await goflow2Alone(binary, 'json', sizes, config.collector);
  const socket = await openSender();
  try {
    const t = await registerSender(stack, socket);
    const rates = [];
    for (const rate of sizes.rates) {
      log(`collector: ${rate} flows/s offered for ${sizes.seconds}s`);
      rates.push(await atRate(t, rate, sizes));
    }
    const holding = rates.filter((r) => r.loss_pct < 0.1);
    const best = holding.length ? holding.reduce((a, b) => (b.stored_flows_per_s > a.stored_flows_per_s ? b : a)) : rates[0]!;
    const details = {
      datagrams: 'half NetFlow v9 (28 records a datagram), half IPFIX (26), interleaved from one socket; each template first and every 1000 datagrams',
      traffic: `background: sources over the public IPv4 space, destinations over ${benchDestinations.prefix}, 1-40 packets a flow (below every default rate threshold)`,
      seconds_per_rate: sizes.seconds,
      rates,
      max_stored_flows_per_s: Math.max(...rates.map((r) => r.stored_flows_per_s)),
      goflow2_alone: { bin, json },
      service_goflow2_peak_rss_mib: serviceGoflow2RssMib(stack),
      collector_over_goflow2_alone: Math.round((best.stored_flows_per_s / bin.flows_per_s) * 1000) / 1000,
    };
    return { flows_per_s: best.stored_flows_per_s, loss_pct: best.loss_pct, goflow2_alone_flows_per_s: bin.flows_per_s, details };
  } finally {
    socket.close();
  }
}
