import fs from 'node:fs';
import path from 'node:path';
import { requireExecutable } from './binaries';
import type { LocalEngineOptions } from './engines';
import { LocalProcess } from './local-process';
import type { Logger } from '../observability/logger';

/**
 * The clickhouse-server the tests run against (Debian's 18.16, which the set-up installs): the
 * embedded default runs chDB and a deployment points CLICKHOUSE_URL at its own server, so only
 * the tests and the bench's cluster scenario (bench/cluster.ts: stream workers as processes of
 * their own, which chDB's one process per folder cannot be) start one.
 */
export interface ClickHouseServerOptions extends LocalEngineOptions {
  tcpPort: number;
  /** More of the server's config, as XML elements of `<yandex>` (a replica's ZooKeeper, macros and cluster). */
  extraConfig?: string;
}

export function localClickHouseServer(opts: ClickHouseServerOptions, log: Logger): LocalProcess {
  const command = requireExecutable('clickhouse-server', opts.binPath, 'run `npm test` or `node scripts/setup.mjs test` as root on Debian, or install it yourself');
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

function writeClickHouseConfig(opts: ClickHouseServerOptions): string {
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
  <default_database>default</default_database>${opts.extraConfig ?? ''}
</yandex>
`;
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(file, xml);
  return file;
}
