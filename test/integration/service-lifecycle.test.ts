import { spawn, type ChildProcess } from 'node:child_process';
import dgram from 'node:dgram';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { connect } from 'nats';
import { freePort } from '../../engines/local-process';
import { embeddedNatsUser } from '../../service/roles/engines';
import type { AuditEntryView, HealthView, MintedKeyView, Page } from '../support/api-types';
import { freeUdpPorts } from '../support/udp';

/**
 * The service as `npm start` runs it (the built dist/service/main.js, which
 * `npm test` builds first), on the embedded defaults: it starts its own
 * nats-server and Temporal dev server, uses chDB, and stops them all on SIGTERM.
 */
const mainJs = path.resolve(__dirname, '../../dist/service/main.js');

interface Running {
  child: ChildProcess;
  url: string;
  /** Printed only by the start that generated it. */
  adminKey?: string;
  exited: Promise<number | null>;
}

async function startService(env: Record<string, string>): Promise<Running> {
  const child = spawn(process.execPath, [mainJs], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  let out = '';
  let err = '';
  child.stderr.on('data', (c) => (err += c));
  return await new Promise<Running>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`service did not start: ${err.slice(-2000)}`)), 90_000);
    child.stdout.on('data', (c) => {
      out += c;
      const url = /nettel is up: (\S+)/.exec(out)?.[1];
      const adminKey = /admin key[^:]*: (nta_\S+)/.exec(out)?.[1];
      if (url && /^try: /m.test(out)) {
        clearTimeout(timer);
        resolve({ child, url, adminKey, exited });
      }
    });
    void exited.then((code) => reject(new Error(`service exited with ${code}: ${err.slice(-2000)}`)));
  });
}

/** Whether a UDP socket can bind the port on loopback (nothing else holds it). */
function udpPortIsFree(port: number): Promise<boolean> {
  const socket = dgram.createSocket('udp4');
  return new Promise((resolve) => {
    socket.once('error', () => resolve(false));
    socket.bind(port, '127.0.0.1', () => socket.close(() => resolve(true)));
  });
}

/** How a connection to a nats-server ends: `connected`, or the error code nats.js gave. */
async function natsConnection(port: number, auth: { user?: string; pass?: string } = {}): Promise<string> {
  try {
    await (await connect({ servers: `127.0.0.1:${port}`, reconnect: false, ...auth })).close();
    return 'connected';
  } catch (err) {
    return String((err as { code?: string }).code ?? err);
  }
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

describe('the service process on embedded defaults', () => {
  let dataDir: string;
  let env: Record<string, string>;

  beforeAll(async () => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'nettel-main-'));
    env = {
      DATA_DIR: dataDir,
      PORT: String(await freePort()),
      HOST: '127.0.0.1',
      EMBEDDED_NATS_PORT: String(await freePort()),
      EMBEDDED_TEMPORAL_PORT: String(await freePort()),
      EMBEDDED_GOBGP_API_PORT: String(await freePort()),
      EMBEDDED_GOBGP_BGP_PORT: String(await freePort()),
      BGP_SPEAKER_ADDRESS: '',
      NATS_URL: '',
      CLICKHOUSE_URL: '',
      TEMPORAL_ADDRESS: '',
      ADMIN_API_KEY: '',
      // The global set-up gives every stack one sealing key; this start makes its own, as `npm start` does.
      WEBHOOK_SECRETS_KEY: '',
      LOG_LEVEL: 'warn',
    };
    const [netflowPort, sflowPort] = await freeUdpPorts(2);
    Object.assign(env, { COLLECTOR_NETFLOW_PORT: String(netflowPort), COLLECTOR_SFLOW_PORT: String(sflowPort) });
  });
  afterAll(() => {
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  test('starts its engines, serves healthz, stops them all on SIGTERM, and keeps keys across a restart', async () => {
    const first = await startService(env);
    const health = (await (await fetch(`${first.url}/healthz`, { headers: { authorization: `Bearer ${first.adminKey}` } })).json()) as HealthView;
    expect(health.status).toBe('ok');
    expect(health.engines.clickhouse.detail).toBe('chdb');
    expect(health.loops.collector?.status).toBe('up');
    expect(health.loops['engine:gobgpd']?.status).toBe('up');
    // Webhook secrets are sealed with a key kept beside the admin key, readable by its owner only.
    expect(fs.statSync(path.join(dataDir, 'webhook-secrets-key')).mode & 0o777).toBe(0o600);
    const minted = (await (
      await fetch(`${first.url}/v1/api-keys`, { method: 'POST', headers: { authorization: `Bearer ${first.adminKey}` } })
    ).json()) as MintedKeyView;
    // Its nats-server takes only the service's generated credentials, kept beside the admin key.
    const natsPort = Number(env.EMBEDDED_NATS_PORT);
    const passwordFile = path.join(dataDir, 'nats-password');
    expect(fs.statSync(passwordFile).mode & 0o777).toBe(0o600);
    const natsPassword = fs.readFileSync(passwordFile, 'utf8').trim();
    expect(await natsConnection(natsPort)).toBe('AUTHORIZATION_VIOLATION');
    expect(await natsConnection(natsPort, { user: embeddedNatsUser, pass: natsPassword })).toBe('connected');
    const enginePids = ['nats/nats-server.pid', 'temporal/temporal.pid', 'gobgp/gobgpd.pid'].map((f) => Number(fs.readFileSync(path.join(dataDir, f), 'utf8')));
    expect(enginePids.every(alive)).toBe(true);

    first.child.kill('SIGTERM');
    expect(await first.exited).toBe(0);
    expect(enginePids.filter(alive)).toEqual([]);
    expect(await udpPortIsFree(Number(env.COLLECTOR_NETFLOW_PORT))).toBe(true); // GoFlow2 stopped with the service

    const second = await startService(env);
    try {
      // Printed once, when generated; kept in the data folder for its owner only.
      expect(first.adminKey).toMatch(/^nta_/);
      expect(second.adminKey).toBeUndefined();
      const keyFile = path.join(dataDir, 'admin-api-key');
      expect(fs.readFileSync(keyFile, 'utf8').trim()).toBe(first.adminKey);
      expect(fs.statSync(keyFile).mode & 0o777).toBe(0o600);
      expect(fs.readFileSync(passwordFile, 'utf8').trim()).toBe(natsPassword);
      expect(await natsConnection(natsPort)).toBe('AUTHORIZATION_VIOLATION');
      const res = await fetch(`${second.url}/v1/audit`, { headers: { authorization: `Bearer ${minted.key}` } });
      expect(res.status).toBe(200);
      expect(((await res.json()) as Page<AuditEntryView>).data).toHaveLength(1);
    } finally {
      second.child.kill('SIGINT');
      expect(await second.exited).toBe(0);
    }
  });

  test('a second start on the same data while the first runs fails without stopping the first one engines', async () => {
    const first = await startService(env);
    try {
      const second = spawn(process.execPath, [mainJs], { env: { ...process.env, ...env }, stdio: 'ignore' });
      const code = await new Promise<number | null>((resolve) => second.once('exit', resolve));
      expect(code).not.toBe(0);
      const health = (await (await fetch(`${first.url}/healthz`)).json()) as HealthView;
      expect(health.status).toBe('ok');
    } finally {
      first.child.kill('SIGTERM');
      expect(await first.exited).toBe(0);
    }
  });
});

