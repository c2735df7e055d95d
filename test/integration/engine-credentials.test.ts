import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { connect, type NatsConnection } from 'nats';
import { freePort } from '../../engines/local-process';
import { createLogger } from '../../observability/logger';
import { embeddedNatsUser } from '../../service/roles/engines';
import { testNatsServer } from '../support/nats-server';
import { startTestStack, type TestStack } from '../support/test-stack';
import { waitFor, waitForTelemetryDrained } from '../support/wait';
import { storedCount } from '../support/stored-count';

/**
 * The embedded nats-server (started by the stack, not the shared test
 * server) takes only clients that authenticate with the credentials the
 * service generated in its data folder; the service itself works with them.
 */
const flow = { src_ip: '192.0.2.1', dst_ip: '192.0.2.2', bytes: 10, packets: 1, protocol: 'udp' };

/** How a connection attempt to a nats-server ended: `connected`, or the error code nats.js gave. */
async function connectOutcome(port: number, auth: { user?: string; pass?: string } = {}): Promise<string> {
  let nc: NatsConnection | undefined;
  try {
    nc = await connect({ servers: `127.0.0.1:${port}`, reconnect: false, timeout: 5_000, ...auth });
    return 'connected';
  } catch (err) {
    return String((err as { code?: string }).code ?? err);
  } finally {
    await nc?.close();
  }
}

const modeOf = (file: string) => fs.statSync(file).mode & 0o777;

describe('the embedded nats-server with generated credentials', () => {
  let t: TestStack;
  let port: number;
  beforeAll(async () => {
    port = await freePort();
    t = await startTestStack('chdb', { NATS_URL: '', EMBEDDED_NATS_PORT: String(port), WORKER_MAX_WAIT_MS: '50' });
  }, 120_000);
  afterAll(async () => {
    await t?.stop();
  });

  const passwordFile = () => path.join(t.dataDir, 'nats-password');

  test('refuses a client without credentials or with a wrong password, while the service publishes and stores through it', async () => {
    expect(await connectOutcome(port)).toBe('AUTHORIZATION_VIOLATION');
    expect(await connectOutcome(port, { user: embeddedNatsUser, pass: 'not-the-password' })).toBe('AUTHORIZATION_VIOLATION');
    const password = fs.readFileSync(passwordFile(), 'utf8').trim();
    expect(await connectOutcome(port, { user: embeddedNatsUser, pass: password })).toBe('connected');

    const operator = await t.mintKey({ role: 'operator' });
    expect((await t.request('POST', '/flow', { key: operator.key, body: flow })).status).toBe(201);
    await waitForTelemetryDrained(t.stack.nats.jsm, t.stack.config.nats.prefix);
    expect(await storedCount(t.stack.clickhouse, 'flows')).toBe(1);
    expect(t.logs.join('')).not.toContain(password);
  });

  test('the credentials are readable by their owner only, and a restart reuses them', async () => {
    const configFile = path.join(t.dataDir, 'nats', 'nats.conf');
    expect(modeOf(passwordFile())).toBe(0o600);
    expect(modeOf(configFile)).toBe(0o600);
    const before = fs.readFileSync(passwordFile(), 'utf8');
    await t.restart();
    expect(fs.readFileSync(passwordFile(), 'utf8')).toBe(before);
    expect(await connectOutcome(port, { user: embeddedNatsUser, pass: before.trim() })).toBe('connected');
    expect(await connectOutcome(port)).toBe('AUTHORIZATION_VIOLATION');
    const operator = await t.mintKey({ role: 'operator' });
    expect((await t.request('POST', '/flow', { key: operator.key, body: flow })).status).toBe(201);
  });
});

describe('a nats-server an earlier release left running without credentials', () => {
  test('is adopted and made to require them', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'nettel-adopt-'));
    const port = await freePort();
    const open = testNatsServer(path.join(dataDir, 'nats'), port, createLogger('silent'), 8 * 1024 ** 3);
    let t: TestStack | undefined;
    try {
      await open.start();
      expect(await connectOutcome(port)).toBe('connected');
      t = await startTestStack('chdb', { NATS_URL: '', EMBEDDED_NATS_PORT: String(port), DATA_DIR: dataDir });
      expect(t.logs.join('')).toContain('reusing running engine');
      // The adopted server reloads its config (SIGHUP) and from then on refuses a client without credentials.
      await waitFor(async () => ((await connectOutcome(port)) === 'AUTHORIZATION_VIOLATION' ? true : undefined), 10_000, 'the reload');
      const operator = await t.mintKey({ role: 'operator' });
      expect((await t.request('POST', '/flow', { key: operator.key, body: flow })).status).toBe(201);
    } finally {
      await t?.stop();
      await open.stop();
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  }, 120_000);
});
