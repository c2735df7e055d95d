import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { loadConfig } from '../../service/config';
import { createLogger } from '../../observability/logger';
import { startStack, type Stack } from '../../service/stack';
import { automationNames, names, outboxNames } from '../../streams/names';

/**
 * A whole service stack for one test file, on the engines the global set-up
 * started: its own ClickHouse database (chDB folder or server database), its
 * own NATS prefix and its own Temporal task queue, so test files never share
 * data.
 */
export type Transport = 'chdb' | 'clickhouse-server';
export const transports: Transport[] = ['chdb', 'clickhouse-server'];

export interface ApiResponse<T = unknown> {
  status: number;
  headers: Headers;
  text: string;
  body: T;
}

export interface RequestOptions {
  key?: string;
  body?: unknown;
  raw?: string | Buffer;
  contentType?: string;
  headers?: Record<string, string>;
}

export interface TestStack {
  stack: Stack;
  url: string;
  adminKey: string;
  dataDir: string;
  /** Every log line the stack wrote, for tests that look for leaked secrets. */
  logs: string[];
  request<T = unknown>(method: string, route: string, opts?: RequestOptions): Promise<ApiResponse<T>>;
  /**
   * A key minted by the platform admin, owned by `owner`: by default a person of its own (`person-<random>`), so
   * two keys are two persons unless a test gives them one owner.
   */
  mintKey(opts?: { role?: string; orgId?: string; expiresInSeconds?: number; owner?: TestOwner }): Promise<MintedTestKey>;
  restart(): Promise<void>;
  stop(): Promise<void>;
}

const uid = () => randomBytes(5).toString('hex');

export type TestOwner = { subject: string; name?: string; email?: string } | 'service';
export interface MintedTestKey {
  key: string;
  key_id: string;
  org_id: string;
  owner: { subject: string; name: string; email: string } | 'service';
}

/** A person of their own, for a test key. */
export const testPerson = (name = 'Test Person') => ({ subject: `person-${uid()}`, name, email: '' });

function testEnv(transport: Transport, dataDir: string, adminKey: string, extraEnv: Record<string, string>): Record<string, string | undefined> {
  const id = uid();
  return {
    ...process.env,
    PORT: '0',
    HOST: '127.0.0.1',
    DATA_DIR: dataDir,
    ADMIN_API_KEY: adminKey,
    NATS_URL: process.env.TEST_NATS_URL,
    TEMPORAL_ADDRESS: process.env.TEST_TEMPORAL_ADDRESS,
    CLICKHOUSE_URL: transport === 'clickhouse-server' ? process.env.TEST_CLICKHOUSE_URL : '',
    // Required with a ClickHouse server (the roles may be separate processes); chDB's start generates one in the data folder.
    DECISION_SIGNING_KEY: transport === 'clickhouse-server' ? randomBytes(32).toString('base64url') : '',
    CLICKHOUSE_DATABASE: `t_${id}`,
    NATS_PREFIX: `t${id}`,
    TEMPORAL_TASK_QUEUE: `t-${id}`,
    LOG_LEVEL: 'debug',
    // The governance tests ask for the temporal-worker role; it loads the run's workflow bundle (TEMPORAL_WORKFLOW_BUNDLE).
    ROLES: 'api,stream-workers',
    NATS_STREAM_MAX_BYTES: String(256 * 1024 * 1024),
    // Every test calls from loopback, and many call without a key on purpose: the throttle of failed
    // authentication would refuse them all. Its own test (hardening.test.ts) turns it on.
    AUTH_FAILURES_PER_MINUTE: '0',
    // Many tests query in a loop with one key: the query budget would refuse them. Its own test (query-limits.test.ts) turns it on.
    QUERY_BUDGET_UNITS_PER_MINUTE: '0',
    // No embedded gobgpd per stack: the BGP tests give their own speaker.
    BGP_SPEAKER_ADDRESS: 'off',
    ...extraEnv,
  };
}

/** A sink that keeps every log line; TEST_LOGS=1 also shows them while a test runs. */
function logSink(logs: string[]): Writable {
  return new Writable({
    write(chunk, _enc, done) {
      logs.push(String(chunk));
      if (process.env.TEST_LOGS) process.stderr.write(String(chunk));
      done();
    },
  });
}

/** JSON requests against the stack's URL; a body that is not JSON is left undefined. */
function requester(urlOf: () => string) {
  return async <T>(method: string, route: string, opts: RequestOptions = {}): Promise<ApiResponse<T>> => {
    const headers: Record<string, string> = { ...(opts.headers ?? {}) };
    if (opts.key) headers.authorization = `Bearer ${opts.key}`;
    let body: string | Buffer | undefined = opts.raw;
    if (opts.body !== undefined) body = JSON.stringify(opts.body);
    if (body !== undefined) headers['content-type'] = opts.contentType ?? 'application/json';
    const res = await fetch(`${urlOf()}${route}`, { method, headers, body });
    const text = await res.text();
    let parsed: unknown = undefined;
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = undefined;
    }
    return { status: res.status, headers: res.headers, text, body: parsed as T };
  };
}

/** The running test file's name, so a data folder left behind (or still held by chDB) names its owner. */
function testFileName(): string {
  const testPath = (globalThis as { expect?: { getState?: () => { testPath?: string } } }).expect?.getState?.().testPath;
  return testPath ? path.basename(testPath).replace(/\.test\.ts$/, '').replace(/[^A-Za-z0-9-]/g, '-') : 'run';
}

export async function startTestStack(transport: Transport, extraEnv: Record<string, string> = {}): Promise<TestStack> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), `nettel-stack-${testFileName()}-`));
  const adminKey = `nta_test_${randomBytes(16).toString('hex')}`;
  const config = loadConfig(testEnv(transport, dataDir, adminKey, extraEnv));
  const logs: string[] = [];
  const sink = logSink(logs);
  let stack = await startStack(config, createLogger(config.logLevel, 'test', sink));
  const request = requester(() => stack.url!);

  const handle: TestStack = {
    get stack() {
      return stack;
    },
    get url() {
      return stack.url!;
    },
    adminKey,
    dataDir,
    logs,
    request,
    async mintKey(opts = {}) {
      const res = await request<MintedTestKey>('POST', '/v1/api-keys', {
        key: adminKey,
        body: {
          owner: opts.owner ?? testPerson(),
          ...(opts.role ? { role: opts.role } : {}),
          ...(opts.orgId ? { org_id: opts.orgId } : {}),
          ...(opts.expiresInSeconds ? { expires_in_seconds: opts.expiresInSeconds } : {}),
        },
      });
      if (res.status !== 201) throw new Error(`mint failed: ${res.status} ${res.text}`);
      return res.body;
    },
    async restart() {
      await stack.stop();
      stack = await startStack(config, createLogger(config.logLevel, 'test', sink));
    },
    async stop() {
      // Streams of a finished test file are removed, so JetStream's storage reservations do not pile up.
      const { prefix } = config.nats;
      const outbox = outboxNames(prefix);
      const streams = [names(prefix).stream, names(prefix).deadLetter, names(prefix).detection, outbox.outbox, outbox.deliveries, automationNames(prefix).triggers];
      const n = names(prefix);
      const buckets = [n.auditHeadsBucket, n.locksBucket, n.mitigationsBucket, n.sessionsBucket, n.signInsBucket, n.queryBudgetBucket].map((b) => `KV_${b}`);
      for (const stream of [...streams, ...buckets]) {
        await stack.nats.jsm.streams.delete(stream).catch(() => undefined);
      }
      if (stack.clickhouse.transport === 'http') {
        await stack.clickhouse.exec(`DROP DATABASE IF EXISTS ${stack.clickhouse.database}`).catch(() => undefined);
      }
      await stack.stop();
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
  return handle;
}
