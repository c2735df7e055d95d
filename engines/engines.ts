import fs from 'node:fs';
import path from 'node:path';
import type { Logger } from '../observability/logger';
import { requireExecutable } from './binaries';
import { LocalProcess, portInUse } from './local-process';

/**
 * The local engines of the embedded default: each is started only when no
 * address points the stack at a running one.
 */
export interface LocalEngineOptions {
  dir: string;
  port: number;
  binPath: readonly string[];
}

const setupHint = 'run `npm start` or `node scripts/setup.mjs` as root on Debian, or install it yourself';

export function localNatsServer(opts: LocalEngineOptions, log: Logger): LocalProcess {
  const command = requireExecutable('nats-server', opts.binPath, setupHint);
  return new LocalProcess(
    {
      name: 'nats-server',
      command,
      args: ['-c', writeNatsConfig(opts)],
      dir: opts.dir,
      port: opts.port,
    },
    log,
  );
}

/** Loopback only, JetStream on, and a payload limit that fits a whole 10 MiB request as one message. */
function writeNatsConfig(opts: LocalEngineOptions): string {
  const dir = path.resolve(opts.dir);
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, 'nats.conf');
  fs.writeFileSync(
    file,
    `listen: "127.0.0.1:${opts.port}"\nmax_payload: ${natsMaxPayload}\njetstream {\n  store_dir: "${path.join(dir, 'store')}"\n}\n`,
  );
  return file;
}

// NATS's own ceiling: a 10 MiB body of small records grows three- to fourfold once stamped.
const natsMaxPayload = 64 * 1024 * 1024;

export function localClickHouseServer(opts: LocalEngineOptions & { tcpPort: number }, log: Logger): LocalProcess {
  const command = requireExecutable('clickhouse-server', opts.binPath, setupHint);
  return new LocalProcess(
    {
      name: 'clickhouse-server',
      command,
      args: [`--config-file=${writeClickHouseConfig(opts)}`],
      dir: opts.dir,
      port: opts.port,
      isReady: async () => {
        const res = await fetch(`http://127.0.0.1:${opts.port}/ping`);
        return res.ok;
      },
    },
    log,
  );
}

function writeClickHouseConfig(opts: LocalEngineOptions & { tcpPort: number }): string {
  const dir = path.resolve(opts.dir);
  const file = path.join(dir, 'config.xml');
  // The smallest config 18.16 and later servers accept: loopback only, a
  // passwordless default user, everything stored under the data folder.
  const xml = `<?xml version="1.0"?>
<yandex>
  <logger><level>warning</level><log>${dir}/server.log</log><errorlog>${dir}/server.err.log</errorlog><size>10M</size><count>1</count></logger>
  <http_port>${opts.port}</http_port>
  <tcp_port>${opts.tcpPort}</tcp_port>
  <listen_host>127.0.0.1</listen_host>
  <path>${dir}/data/</path>
  <tmp_path>${dir}/tmp/</tmp_path>
  <user_files_path>${dir}/user_files/</user_files_path>
  <format_schema_path>${dir}/format_schemas/</format_schema_path>
  <mark_cache_size>536870912</mark_cache_size>
  <users><default><password></password><networks><ip>127.0.0.1</ip><ip>::1</ip></networks><profile>default</profile><quota>default</quota></default></users>
  <profiles><default></default></profiles>
  <quotas><default></default></quotas>
  <default_profile>default</default_profile>
  <default_database>default</default_database>
</yandex>
`;
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(file, xml);
  return file;
}

/** With `uiPort`, the dev server's Web UI listens on 127.0.0.1 there; without it, the server is headless. */
export function localTemporalServer(opts: LocalEngineOptions & { cli?: string; toolsDir: string; uiPort?: number }, log: Logger): LocalProcess {
  const command =
    opts.cli ?? requireExecutable('temporal', [...opts.binPath, opts.toolsDir], `${setupHint}, or set TEMPORAL_CLI`);
  return new LocalProcess(
    {
      name: 'temporal',
      command,
      args: [
        'server',
        'start-dev',
        ...(opts.uiPort ? ['--ui-ip', '127.0.0.1', '--ui-port', String(opts.uiPort)] : ['--headless']),
        '--ip',
        '127.0.0.1',
        '--port',
        String(opts.port),
        '--db-filename',
        path.join(path.resolve(opts.dir), 'temporal.db'),
        '--log-level',
        'warn',
      ],
      dir: opts.dir,
      port: opts.port,
      isReady: () => portInUse(opts.port),
      startTimeoutMs: 120_000,
    },
    log,
  );
}
