import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { DefaultLogger } from '@temporalio/worker';
import { localTemporalServer } from '../../engines/engines';
import { freePort } from '../../engines/local-process';
import { writeWorkflowBundle } from '../../service/build-workflow-bundle';
import { loadConfig } from '../../service/config';
import { createLogger } from '../../observability/logger';
import type { LocalProcess } from '../../engines/local-process';
import { localClickHouseServer } from '../../engines/clickhouse-server';
import { testNatsServer } from './nats-server';

/**
 * Starts the real engines the integration tests run against: a nats-server
 * with JetStream as the embedded default runs it, a clickhouse-server (Debian's 18.16) and a Temporal dev
 * server, each on free ports with its store in a fresh temporary folder, so
 * nothing collides with engines already running on the machine. It also
 * bundles workflows/ once, from the sources, for every Temporal worker of
 * the run, as the set-up does for production.
 */
declare global {
  var __nettelEngines: { processes: LocalProcess[]; dir: string } | undefined;
}

export default async function globalSetup(): Promise<void> {
  const config = loadConfig(process.env);
  const log = createLogger('warn', 'test-engines');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'nettel-test-'));
  const [natsPort, chPort, chTcpPort, temporalPort, temporalUiPort] = await Promise.all([freePort(), freePort(), freePort(), freePort(), freePort()]);
  const nats = testNatsServer(path.join(dir, 'nats'), natsPort, log);
  const clickhouse = localClickHouseServer(
    { dir: path.join(dir, 'clickhouse'), port: chPort, tcpPort: chTcpPort, binPath: config.binPath },
    log,
  );
  const temporal = localTemporalServer(
    { dir: path.join(dir, 'temporal'), port: temporalPort, uiPort: temporalUiPort, binPath: config.binPath, cli: config.temporal.cli, toolsDir: config.toolsDir },
    log,
  );
  const processes = [nats, clickhouse, temporal];
  globalThis.__nettelEngines = { processes, dir };
  // The bundle (webpack, seconds of CPU) is built while the engines start, instead of once per worker start.
  const workflowBundle = path.join(dir, 'workflow-bundle.js');
  await Promise.all([...processes.map((p) => p.start()), writeWorkflowBundle(workflowBundle, new DefaultLogger('WARN'))]);
  // Every stack and worker process of the run seals and opens webhook secrets with one key, as a deployment's roles do.
  process.env.WEBHOOK_SECRETS_KEY ??= randomBytes(32).toString('base64url');
  process.env.AUDIT_CHAIN_KEY ??= randomBytes(32).toString('base64url');
  process.env.TEST_NATS_URL = `nats://127.0.0.1:${natsPort}`;
  process.env.TEST_CLICKHOUSE_URL = `http://127.0.0.1:${chPort}`;
  process.env.TEST_TEMPORAL_ADDRESS = `127.0.0.1:${temporalPort}`;
  process.env.TEST_TEMPORAL_UI_URL = `http://127.0.0.1:${temporalUiPort}`;
  process.env.TEST_ENGINES_DIR = dir;
  // One cache of parsed address ranges for every stack and process of the run: the first parses the CSVs, the rest read the tables back.
  process.env.ENRICHMENT_CACHE_DIR ??= path.join(dir, 'enrichment-cache');
  // Every stack and worker process of the run loads this bundle, as production loads the set-up's.
  process.env.TEMPORAL_WORKFLOW_BUNDLE = workflowBundle;
}
