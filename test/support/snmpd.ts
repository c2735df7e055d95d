import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { interfaceOids } from '../../core/enrichment/interfaces';
import { freeUdpPorts } from './udp';
import { waitFor } from './wait';

export const SNMPD_BINARY = '/usr/sbin/snmpd';

/** An interface the agent serves, as the test names it. */
export interface AgentInterface {
  index: number;
  name: string;
  alias: string;
  /** ifHighSpeed, Mbit/s. */
  highSpeed: number;
  descr?: string;
}

export interface SnmpdOptions {
  /** The loopback address it listens on (the exporter's address). */
  address: string;
  interfaces: AgentInterface[];
  community: string;
  v3: { user: string; authKey: string; privKey: string };
}

export interface RunningSnmpd {
  port: number;
  /** SIGKILL: the agent stops answering at once. */
  kill(): void;
  stop(): Promise<void>;
}

const quoted = (text: string) => `"${text.replace(/["\\]/g, '')}"`;

/**
 * The agent's configuration: loopback only, a v2c community and a v3 user
 * with SHA-256 authentication and AES privacy, and the interfaces as fixed
 * values (`override`). The host's own interface tables (ifTable, ifXTable)
 * are left out with `-I`, so the tables hold exactly the interfaces named.
 */
function configOf(opts: SnmpdOptions, port: number): string {
  const lines = [
    `agentaddress udp:${opts.address}:${port}`,
    `rocommunity ${opts.community} 127.0.0.0/8`,
    `createUser ${opts.v3.user} SHA-256 ${quoted(opts.v3.authKey)} AES ${quoted(opts.v3.privKey)}`,
    `rouser ${opts.v3.user} priv`,
  ];
  for (const i of opts.interfaces) {
    lines.push(`override .${interfaceOids.name}.${i.index} octet_str ${quoted(i.name)}`);
    lines.push(`override .${interfaceOids.alias}.${i.index} octet_str ${quoted(i.alias)}`);
    // uinteger: a Gauge32, as ifHighSpeed is.
    lines.push(`override .${interfaceOids.highSpeed}.${i.index} uinteger ${i.highSpeed}`);
    lines.push(`override .${interfaceOids.descr}.${i.index} octet_str ${quoted(i.descr ?? i.name)}`);
  }
  return lines.join('\n') + '\n';
}

/**
 * Debian's snmpd in the foreground on a loopback high port, with its own
 * configuration and SNMP_PERSISTENT_DIR (the v3 user's keys land there), so
 * nothing of the host's agent is read or written. Ready when it logs its
 * start-up line.
 */
export async function startSnmpd(opts: SnmpdOptions): Promise<RunningSnmpd> {
  const [port] = await freeUdpPorts(1);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'nettel-snmpd-'));
  const conf = path.join(dir, 'snmpd.conf');
  fs.writeFileSync(conf, configOf(opts, port!));
  fs.mkdirSync(path.join(dir, 'persist'));
  let log = '';
  const child: ChildProcess = spawn(SNMPD_BINARY, ['-f', '-C', '-c', conf, '-I', '-ifTable,ifXTable,interfaces', '-Lo', '-M', dir, '-m', ''], {
    env: { ...process.env, SNMP_PERSISTENT_DIR: path.join(dir, 'persist'), MIBDIRS: dir },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const collect = (chunk: Buffer) => (log += chunk.toString());
  child.stdout?.on('data', collect);
  child.stderr?.on('data', collect);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  await waitFor(async () => (log.includes('NET-SNMP version') ? true : child.exitCode !== null ? Promise.reject(new Error(`snmpd exited: ${log}`)) : undefined), 10_000, 'snmpd to start');
  const cleanup = () => fs.rmSync(dir, { recursive: true, force: true });
  return {
    port: port!,
    kill: () => {
      child.kill('SIGKILL');
    },
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await exited;
      cleanup();
    },
  };
}
