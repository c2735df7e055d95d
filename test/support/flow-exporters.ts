import { type ChildProcess, spawn } from 'node:child_process';
import { createSocket, type Socket } from 'node:dgram';
import { accessSync, constants, copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

/**
 * Real flow exporters read a pcap and send NetFlow v5/v9, IPFIX or sFlow to 127.0.0.1:port. Each
 * promise resolves once the tool has exited, every datagram sent: the collector may still be decoding.
 */

export const EXPORTER_BINARIES = { softflowd: '/usr/sbin/softflowd', pmacctd: '/usr/sbin/pmacctd', nfpcapd: '/usr/bin/nfpcapd', nfreplay: '/usr/bin/nfreplay' } as const;

export type ExporterName = keyof typeof EXPORTER_BINARIES;

export interface ExportResult {
  commands: string[][]; // argv of every command run, binary first
  config?: string; // pmacctd's configuration file
  durationMs: number;
  stdout: string;
  stderr: string;
}

interface Common {
  pcap: string;
  port: number;
  workDir?: string; // scratch files; by default a temp dir, removed afterwards
  timeoutMs?: number;
  sourceIp?: string; // send from this loopback address (through relay()): collectors key exporters by it
  paceMs?: number; // relay the datagrams this many ms apart (see relay())
}

export interface SoftflowdOptions extends Common {
  version: 5 | 9 | 10;
  samplingRate?: number; // -s: deterministic 1-in-N (see periodicSample); counts not scaled, rate exported
}

export interface PmacctOptions extends Common {
  plugin: 'nfprobe' | 'sfprobe';
  version?: 5 | 9 | 10; // nfprobe only; default 10 (IPFIX)
  samplingRate?: number; // random 1-in-N; counts not scaled, rate exported
  agentIp?: string; // sfprobe: the sFlow agent, reported as the exporter; default sourceIp or 127.0.0.1
}

export interface NfreplayOptions extends Common {
  version: 5 | 9;
}

const HOST = '127.0.0.1';

/** The exporters that are installed, so a test can skip rather than fail where they are not. */
export function availableExporters(): ExporterName[] {
  return (Object.keys(EXPORTER_BINARIES) as ExporterName[]).filter((name) => {
    try {
      accessSync(EXPORTER_BINARIES[name], constants.X_OK);
      return true;
    } catch {
      return false;
    }
  });
}

/**
 * softflowd reading the pcap. -c none: with a control socket softflowd 1.1.0 blocks in accept()
 * after the file instead of exiting. -a: flow times from the packets (else v9 times are 2^32 ms
 * ahead, uptime having wrapped). -A milli: IPFIX times in milliseconds, not whole seconds.
 */
export async function softflowdExport(opts: SoftflowdOptions): Promise<ExportResult> {
  return withScratch(opts, async (dir, port) => {
    const args = ['-d', '-r', opts.pcap, '-n', `${HOST}:${port}`, '-v', String(opts.version), '-a', '-c', 'none', '-p', join(dir, 'softflowd.pid')];
    if (opts.version === 10) args.push('-A', 'milli');
    if (opts.samplingRate !== undefined) args.push('-s', String(positive(opts.samplingRate, 'samplingRate')));
    const started = Date.now();
    const out = await run(EXPORTER_BINARIES.softflowd, args, { cwd: dir, timeoutMs: opts.timeoutMs ?? 15_000 });
    return { commands: [[EXPORTER_BINARIES.softflowd, ...args]], durationMs: Date.now() - started, ...out };
  });
}

const PMACCT_DRAIN_MS = 500;

/**
 * pmacctd reading the pcap in the foreground (~4.5 s). At the end of a file it stops its plugin, and
 * sfprobe drops its unsent datagram (sent when full or on a 1-second tick run only when data comes in);
 * a SIGINT to a waiting core (pcap_savefile_wait) makes it hand its last buffer over again, counting
 * the tail twice. So the file is played twice, the second time 1 s later as an empty capture swapped
 * in once the core opened the real one: the last buffer reaches the plugin in a later second, and the
 * tick sends it. Then the plugin alone gets SIGINT: it exports what it holds and exits, and so does the
 * core ("Failed during write: Connection refused" is that last buffer meeting the gone plugin).
 * timestamp_start/end: nfprobe exports packet times (v5, IPFIX; v9: when pmacctd read them).
 */
export async function pmacctExport(opts: PmacctOptions): Promise<ExportResult> {
  return withScratch(opts, async (dir, port) => {
    // A copy of our own, since it gets emptied halfway through.
    const input = join(dir, 'input.pcap');
    copyFileSync(opts.pcap, input);
    const config = pmacctConfig(opts, input, port);
    const file = join(dir, `pmacctd-${opts.plugin}.conf`);
    writeFileSync(file, config);
    const args = ['-f', file];
    const started = Date.now();
    const out = await run(EXPORTER_BINARIES.pmacctd, args, { cwd: dir, timeoutMs: opts.timeoutMs ?? 30_000, onStderr: pmacctDriver(input) });
    return { commands: [[EXPORTER_BINARIES.pmacctd, ...args]], config, durationMs: Date.now() - started, ...out };
  });
}

/** Reacts to pmacctd's log: empties the input once opened, stops the plugin once the file is read. */
function pmacctDriver(input: string): (stderr: string, child: ChildProcess) => void {
  let swapped = false;
  let stopping = false;
  return (stderr, child) => {
    // "link type is" is logged right after the core opened the file for the first round.
    if (!swapped && stderr.includes('link type is')) {
      swapped = true;
      // The 24-byte global header alone: a valid capture without packets.
      writeFileSync(`${input}.empty`, readFileSync(input).subarray(0, 24));
      renameSync(`${input}.empty`, input);
    }
    if (!stopping && stderr.includes('finished reading PCAP capture file')) {
      stopping = true;
      setTimeout(() => {
        if (child.exitCode === null && child.signalCode === null) childrenOf(child.pid).forEach((pid) => sendSignal(pid, 'SIGINT'));
      }, PMACCT_DRAIN_MS);
    }
  };
}

/** Linux: the pids of a process's children (pmacctd's plugins). */
function childrenOf(pid: number | undefined): number[] {
  if (pid === undefined) return [];
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

function pmacctConfig(opts: PmacctOptions, input: string, port: number): string {
  if (/[\r\n]/.test(input)) throw new Error('pcap path must not contain line breaks');
  const lines = ['daemonize: false', `pcap_savefile: ${input}`, 'pcap_savefile_wait: true', 'pcap_savefile_replay: 2', 'pcap_savefile_delay: 1'];
  lines.push(`plugins: ${opts.plugin}`);
  if (opts.plugin === 'nfprobe') {
    lines.push(`nfprobe_receiver: ${HOST}:${port}`, `nfprobe_version: ${opts.version ?? 10}`);
    lines.push('aggregate: src_host, dst_host, src_port, dst_port, proto, tos, timestamp_start, timestamp_end');
  } else {
    const agent = opts.agentIp ?? opts.sourceIp ?? HOST;
    if (!/^\d{1,3}(\.\d{1,3}){3}$/.test(agent)) throw new Error(`agentIp must be an IPv4 address: ${agent}`);
    lines.push(`sfprobe_receiver: ${HOST}:${port}`, `sfprobe_agentip: ${agent}`);
  }
  if (opts.samplingRate !== undefined) lines.push(`sampling_rate: ${positive(opts.samplingRate, 'samplingRate')}`);
  return `${lines.join('\n')}\n`;
}

/**
 * nfpcapd turns the pcap into nfcapd files (one per 5-minute slot the packets
 * fall in), then nfreplay sends each as NetFlow v5 or v9.
 */
export async function nfreplayExport(opts: NfreplayOptions): Promise<ExportResult> {
  return withScratch(opts, async (dir, port) => {
    const flowDir = join(dir, 'nfcapd');
    mkdirSync(flowDir, { recursive: true });
    const started = Date.now();
    const commands = [[EXPORTER_BINARIES.nfpcapd, '-r', opts.pcap, '-w', flowDir]];
    const [captured] = await runAll(commands, dir, opts.timeoutMs);
    const files = readdirSync(flowDir).filter((f) => /^nfcapd\.\d{12}$/.test(f)).sort();
    if (files.length === 0) throw new Error(`nfpcapd wrote no nfcapd file in ${flowDir}: ${captured?.stderr ?? ''}`);
    const replays = files.map((f) => [EXPORTER_BINARIES.nfreplay, '-r', join(flowDir, f), '-H', HOST, '-p', String(port), '-v', String(opts.version)]);
    const outputs = [captured, ...(await runAll(replays, dir, opts.timeoutMs))];
    const joined = (k: 'stdout' | 'stderr'): string => outputs.map((o) => o?.[k] ?? '').join('');
    return { commands: [...commands, ...replays], durationMs: Date.now() - started, stdout: joined('stdout'), stderr: joined('stderr') };
  });
}

/** Runs argv commands one after the other. */
async function runAll(commands: string[][], cwd: string, timeoutMs = 15_000): Promise<{ stdout: string; stderr: string }[]> {
  const outputs = [];
  for (const [bin = '', ...args] of commands) outputs.push(await run(bin, args, { cwd, timeoutMs }));
  return outputs;
}

function positive(n: number, what: string): number {
  if (!Number.isInteger(n) || n < 1) throw new Error(`${what} must be a positive integer: ${n}`);
  return n;
}

/** Runs `body` with a scratch dir and the port the exporter must send to: the relay's, when one is asked for. */
async function withScratch<T>(opts: Common, body: (dir: string, port: number) => Promise<T>): Promise<T> {
  const dir = opts.workDir ?? mkdtempSync(join(tmpdir(), 'flow-exporter-'));
  try {
    mkdirSync(dir, { recursive: true });
    const hop = opts.sourceIp !== undefined || opts.paceMs ? await relay(opts.sourceIp ?? HOST, opts.port, opts.paceMs ?? 0) : undefined;
    try {
      return await body(dir, hop?.port ?? opts.port);
    } finally {
      await hop?.close();
    }
  } finally {
    if (opts.workDir === undefined) rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * A loopback UDP relay forwarding, in order and `paceMs` apart, from `sourceIp`
 * to 127.0.0.1:port: softflowd and nfreplay cannot pick their source address;
 * pacing lets a collector decoding datagrams in parallel (GoFlow2's workers)
 * learn a template before the data using it (pmacct sends them back to back).
 */
async function relay(sourceIp: string, port: number, paceMs: number): Promise<{ port: number; close: () => Promise<void> }> {
  const inbound = createSocket({ type: 'udp4', recvBufferSize: 4 * 1024 * 1024 }); // sfprobe's bursts overflowed 208 KiB (Udp RcvbufErrors); capped at rmem_max
  const outbound = createSocket('udp4');
  const closeBoth = (): void => [inbound, outbound].forEach((s) => s.close());
  await Promise.all([bindSocket(inbound, HOST), bindSocket(outbound, sourceIp)]).catch((err: unknown) => {
    closeBoth();
    throw err;
  });
  let queue = Promise.resolve();
  let received = 0;
  inbound.on('message', (msg) => {
    received += 1;
    queue = queue.then(async () => {
      await new Promise<void>((resolve, reject) => outbound.send(msg, port, HOST, (err) => (err ? reject(err) : resolve())));
      await sleep(paceMs);
    });
  });
  const close = async (): Promise<void> => {
    // The exporter has exited: what it sent waits in our socket buffer, read within a few turns of the loop.
    try {
      for (let seen = -1; seen !== received; seen = received) await sleep(30).then(() => queue);
    } finally {
      closeBoth();
    }
  };
  return { port: inbound.address().port, close };
}

function bindSocket(socket: Socket, address: string): Promise<void> {
  return new Promise((resolve, reject) => {
    socket.once('error', reject);
    socket.bind(0, address, () => resolve());
  });
}

interface RunOptions {
  cwd: string;
  timeoutMs: number;
  onStderr?: (stderr: string, child: ChildProcess) => void; // all of stderr so far, each time it grows
}

/**
 * Runs a command in its own process group, so that on timeout the tool and any
 * child it forked (pmacctd runs its plugin as one) are stopped together.
 * Rejects with the tool's stderr when it fails or times out.
 */
function run(bin: string, args: string[], opts: RunOptions): Promise<{ stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(bin, args, { cwd: opts.cwd, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    const out = { stdout: '', stderr: '' };
    const timers = watch(child, out, opts);
    child.on('error', (err) => {
      timers.clear();
      reject(new Error(`${bin}: ${err.message}`));
    });
    child.on('close', (code, sig) => {
      timers.clear();
      if (code === 0 && !timers.timedOut()) return resolve(out);
      const why = timers.timedOut() ? `timed out after ${opts.timeoutMs} ms` : `exited with ${code ?? sig}`;
      reject(new Error(`${bin} ${args.join(' ')} ${why}: ${out.stderr.trim() || out.stdout.trim()}`));
    });
  });
}

/** Collects the output, passes stderr to `onStderr`, and stops the whole group (TERM, then KILL) on timeout. */
function watch(child: ChildProcess, out: { stdout: string; stderr: string }, opts: RunOptions): { clear: () => void; timedOut: () => boolean } {
  const pending: NodeJS.Timeout[] = [];
  let timedOut = false;
  child.stdout?.on('data', (d: Buffer) => (out.stdout += d.toString()));
  child.stderr?.on('data', (d: Buffer) => {
    out.stderr += d.toString();
    opts.onStderr?.(out.stderr, child);
  });
  // A negative pid names the process group: the tool and what it forked.
  const group = (sig: NodeJS.Signals): void => void (child.pid !== undefined && sendSignal(-child.pid, sig));
  pending.push(
    setTimeout(() => {
      timedOut = true;
      group('SIGTERM');
      pending.push(setTimeout(() => group('SIGKILL'), 2_000));
    }, opts.timeoutMs),
  );
  return { clear: () => pending.forEach((t) => clearTimeout(t)), timedOut: () => timedOut };
}

function sendSignal(pid: number, sig: NodeJS.Signals): void {
  try {
    process.kill(pid, sig);
  } catch {
    // Already gone.
  }
}
