import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import type { Config } from '../../service/config';

const mainJs = path.resolve(__dirname, '../../dist/service/main.js');

/**
 * The built service (`npm test` builds it first) running only the stream
 * workers (or the roles `env` names in ROLES), as its own process on the test
 * stack's engines, database and NATS prefix, so a test can kill it (-9) and
 * start it again.
 */
export function startWorkerProcess(
  config: { clickhouse: Pick<Config['clickhouse'], 'database'>; nats: Pick<Config['nats'], 'prefix'> },
  dataDir: string,
  env: Record<string, string> = {},
  /** Where its output goes (appended); none is kept without one. */
  logFile?: string,
): { child: ChildProcess; exited: Promise<unknown> } {
  const log = logFile === undefined ? 'ignore' : fs.openSync(logFile, 'a');
  const child = spawn(process.execPath, [mainJs], {
    env: {
      ...process.env,
      ROLES: 'stream-workers',
      DATA_DIR: dataDir,
      NATS_URL: process.env.TEST_NATS_URL,
      CLICKHOUSE_URL: process.env.TEST_CLICKHOUSE_URL,
      CLICKHOUSE_DATABASE: config.clickhouse.database,
      NATS_PREFIX: config.nats.prefix,
      TEMPORAL_ADDRESS: process.env.TEST_TEMPORAL_ADDRESS,
      ADMIN_API_KEY: 'unused-in-a-worker-process',
      WORKER_MAX_WAIT_MS: '20',
      LOG_LEVEL: 'warn',
      BGP_SPEAKER_ADDRESS: 'off',
      ...env,
    },
    stdio: ['ignore', log, log],
  });
  if (typeof log === 'number') fs.closeSync(log);
  return { child, exited: new Promise((r) => child.once('exit', r)) };
}
