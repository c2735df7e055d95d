import { execFileSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort, type LocalProcess } from '../../engines/local-process';
import { createLogger } from '../../observability/logger';
import { loadConfig } from '../../service/config';
import { localClickHouseServer } from '../../engines/clickhouse-server';
import { waitFor } from '../support/wait';
import { runScenario, whileAcknowledging, type ScenarioResult } from '../support/chaos/scenario';
import type { LoadClient } from '../support/chaos/load-client';
import { ServiceProcess, type EmbeddedEngine } from '../support/chaos/service-process';
import { chdbQueries, serverQueries } from '../support/chaos/stored-flows';
import { startWorkerProcess } from '../support/worker-process';

/**
 * The chaos suite: a service run as `npm start` runs it, under a load of
 * batched posts with Idempotency-Key that retries as a real client does,
 * while one process of it is killed with SIGKILL mid-load and restarted.
 * After each: every acknowledged flow is stored exactly once in the raw
 * table and counted once in every rollup, the workspace's audit chain
 * verifies, and the replay that waited for approval through it completes.
 */
const adminKey = `nta_chaos_${randomBytes(16).toString('hex')}`;
/** With a ClickHouse server the start requires DECISION_SIGNING_KEY (the roles may be separate processes). */
const decisionSigningKey = randomBytes(32).toString('base64url');
const log = createLogger('silent');
/** A scenario starts a service with its own Temporal dev server and runs a load through a kill: minutes, not seconds. */
const scenarioTimeoutMs = 300_000;
let root: string;

beforeAll(() => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), 'nettel-chaos-'));
});
afterAll(() => {
  // CHAOS_KEEP=1 keeps the services' folders (their logs and the engines') to look into a failure.
  if (!process.env.CHAOS_KEEP) fs.rmSync(root, { recursive: true, force: true });
});

function expectExactlyOnce(r: ScenarioResult): void {
  expect({ stored: r.stored, unexpectedAnswers: r.load.unexpected, auditValid: r.auditValid, replay: r.replay.status }).toEqual({
    stored: { stored: r.load.acknowledgedFlows, lost: 0, doubled: 0, rollupsOff: [] },
    unexpectedAnswers: [],
    auditValid: true,
    replay: 'completed',
  });
}

const chdb = (svc: ServiceProcess) => () => ({ run: chdbQueries(svc.dataDir, 'nettel'), database: 'nettel', stopFirst: true });
const server = (url: string, database: string) => () => ({ run: serverQueries(url), database, stopFirst: false });
const service = (name: string, env: Record<string, string> = {}) => new ServiceProcess(path.join(root, name), adminKey, env);

/** Writes `file` until its disk is full: big blocks first, then small ones for the last bytes. */
function fillUp(file: string): void {
  const fd = fs.openSync(file, 'w');
  try {
    for (const size of [1024 * 1024, 4096]) {
      const block = Buffer.alloc(size);
      try {
        for (;;) fs.writeSync(fd, block);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'ENOSPC') throw err;
      }
    }
  } finally {
    fs.closeSync(fd);
  }
}

/** Kills an embedded engine, waits for its supervisor to start a new one, then for the service to answer healthy. */
async function killAndRecover(engine: EmbeddedEngine, svc: ServiceProcess): Promise<number> {
  const killed = svc.enginePid(engine);
  process.kill(killed, 'SIGKILL');
  await waitFor(() => Promise.resolve(svc.enginePid(engine) !== killed ? true : undefined), 60_000, `a new ${engine} process`);
  await waitFor(async () => ((await fetch(`${svc.url}/healthz`).catch(() => undefined))?.status === 200 ? true : undefined), 120_000, 'healthz ok');
  return 1;
}

test('kill -9 of the embedded nats-server mid-load loses and doubles nothing', async () => {
  const svc = service('nats');
  expectExactlyOnce(await runScenario({ name: 'nats-server', svc, chaos: () => killAndRecover('nats', svc), storedBy: chdb(svc) }));
}, scenarioTimeoutMs);

test('kill -9 of the whole npm start process tree mid-load, then a new start, loses and doubles nothing', async () => {
  const svc = service('tree');
  const chaos = async () => {
    await svc.killTree();
    await svc.start();
    return 1;
  };
  expectExactlyOnce(await runScenario({ name: 'process tree', svc, chaos, storedBy: chdb(svc) }));
}, scenarioTimeoutMs);

test('kill -9 of the Temporal dev server while a replay waits for approval loses nothing and the replay completes', async () => {
  const svc = service('temporal');
  expectExactlyOnce(await runScenario({ name: 'temporal', svc, chaos: () => killAndRecover('temporal', svc), storedBy: chdb(svc) }));
}, scenarioTimeoutMs);

describe('on a ClickHouse server', () => {
  let clickhouse: LocalProcess;
  let url: string;
  beforeAll(async () => {
    const [port, tcp] = await Promise.all([freePort(), freePort()]);
    clickhouse = localClickHouseServer({ dir: path.join(root, 'clickhouse'), port, tcpPort: tcp, binPath: loadConfig(process.env).binPath }, log);
    await clickhouse.start();
    url = `http://127.0.0.1:${port}`;
  });
  afterAll(async () => {
    await clickhouse?.stop();
  });

  test('kill -9 of clickhouse-server mid-load, restarted, loses and doubles nothing', async () => {
    const database = `chaos_${randomBytes(4).toString('hex')}`;
    const svc = service('clickhouse', { CLICKHOUSE_URL: url, CLICKHOUSE_DATABASE: database, DECISION_SIGNING_KEY: decisionSigningKey });
    const chaos = async () => {
      process.kill(clickhouse.pid!, 'SIGKILL');
      // The outage's length is the scenario (the load meets a dead server for 3 s), not a wait for anything.
      await new Promise((resolve) => setTimeout(resolve, 3000));
      await clickhouse.start();
      return 1;
    };
    expectExactlyOnce(await runScenario({ name: 'clickhouse-server', svc, chaos, storedBy: server(url, database) }));
  }, scenarioTimeoutMs);

  test('kill -9 of a stream worker process mid-load, started again, loses and doubles nothing', async () => {
    const database = `chaos_${randomBytes(4).toString('hex')}`;
    const svc = service('worker', { CLICKHOUSE_URL: url, CLICKHOUSE_DATABASE: database, ROLES: 'api,temporal-worker', DECISION_SIGNING_KEY: decisionSigningKey });
    let worker: { child: ChildProcess; exited: Promise<unknown> } | undefined;
    const startWorker = () => {
      const env = { NATS_URL: svc.natsUrl, CLICKHOUSE_URL: url, NATS_ACK_WAIT_MS: '5000', WORKER_MAX_WAIT_MS: '50' };
      worker = startWorkerProcess({ clickhouse: { database }, nats: { prefix: 'nettel' } }, path.join(root, 'worker-data'), env, path.join(root, 'worker.log'));
      return Promise.resolve();
    };
    const alongside = { start: startWorker, stop: async () => { worker?.child.kill('SIGTERM'); await worker?.exited; } };
    const chaos = async (load: LoadClient) => {
      worker!.child.kill('SIGKILL');
      await worker!.exited;
      await whileAcknowledging(load, 5);
      await startWorker();
      return 1;
    };
    expectExactlyOnce(await runScenario({ name: 'stream worker', svc, alongside, chaos, storedBy: server(url, database) }));
  }, scenarioTimeoutMs);
});

test('a full disk under the NATS store makes ingestion answer 503, loses nothing, and recovers by itself when space returns', async () => {
  const svc = service('disk-full', { ENGINE_LIVENESS_FAIL_AFTER_MS: '6000' });
  const store = path.join(svc.dataDir, 'nats');
  fs.mkdirSync(store, { recursive: true });
  execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=96m', 'tmpfs', store]);
  const ballast = path.join(store, 'ballast');
  try {
    const chaos = async (load: LoadClient) => {
      fillUp(ballast);
      const refusedBefore = load.retriesOf('503');
      await waitFor(() => Promise.resolve(load.retriesOf('503') > refusedBefore + 8 ? true : undefined), 60_000, 'ingestion to answer 503');
      fs.rmSync(ballast);
      return 0;
    };
    const result = await runScenario({ name: 'disk full', svc, chaos, storedBy: chdb(svc) });
    expectExactlyOnce(result);
    expect(result.load.retries['503']).toBeGreaterThan(8);
  } finally {
    execFileSync('umount', ['-l', store]);
  }
}, scenarioTimeoutMs);
