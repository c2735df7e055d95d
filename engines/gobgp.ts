import fs from 'node:fs';
import path from 'node:path';
import type { Logger } from '../observability/logger';
import { findExecutable, requireExecutable } from './binaries';
import { LocalProcess, portInUse } from './local-process';

/**
 * gobgpd, the BGP speaker mitigations are announced through, as a local
 * engine: Debian's 3.10.0, installed by the set-up with its daemon kept
 * stopped, run in the foreground under this stack's supervision.
 */
export interface LocalGobgpOptions {
  /** Folder for its config, pid file and log. */
  dir: string;
  /** The BGP port it listens on (127.0.0.1 only). */
  bgpPort: number;
  /** The gRPC port of its API (127.0.0.1 only): it has no authentication, so it never leaves loopback. */
  apiPort: number;
  asn: number;
  routerId: string;
  /** The address it listens on and peers from; loopback unless the operator names another. */
  listenAddress?: string;
  binPath: readonly string[];
  /** Where the set-up puts the gobgpd it builds when Debian's cannot be installed. */
  toolsDir?: string;
  /** A gobgpd binary to run instead of the one on the path. */
  server?: string;
  /** The settings that choose its ports, named in the error when one is taken. */
  portSettings?: Array<{ port: number; setting: string }>;
  /** TLS on its API (gobgpd --tls), with this certificate and key. */
  tls?: { certFile: string; keyFile: string };
}

/** The release the set-up fetches gobgpd's .proto files of: Debian's gobgpd is this one. */
export const gobgpModuleVersion = 'v3.10.0';

/** The gobgpd the set-up builds from the module proxy where Debian's cannot be installed (scripts/setup.mjs names it too). */
export const gobgpdBuildName = `gobgpd-${gobgpModuleVersion}`;

/** The folder, inside the tools folder, the set-up puts gobgpd's .proto files in (scripts/setup.mjs names it too). */
export const gobgpProtoDirName = `gobgp-proto-${gobgpModuleVersion}`;

export function gobgpProtoDir(toolsDir: string): string {
  return path.join(toolsDir, gobgpProtoDirName);
}

/**
 * The config gobgpd starts with: its own identity only. Neighbours are the
 * operator's and arrive over the API, so a config change never needs a
 * restart that would drop every announced route.
 */
export function gobgpConfigText(opts: Pick<LocalGobgpOptions, 'asn' | 'routerId' | 'bgpPort' | 'listenAddress'>): string {
  return (
    '[global.config]\n' +
    `  as = ${opts.asn}\n` +
    `  router-id = ${JSON.stringify(opts.routerId)}\n` +
    `  port = ${opts.bgpPort}\n` +
    `  local-address-list = [${JSON.stringify(opts.listenAddress ?? '127.0.0.1')}]\n`
  );
}

function writeGobgpConfig(opts: LocalGobgpOptions): string {
  const dir = path.resolve(opts.dir);
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, 'gobgpd.toml');
  fs.writeFileSync(file, gobgpConfigText(opts));
  return file;
}

/**
 * Without `--api-hosts` gobgpd's gRPC listens on every address (:50051), and
 * without `--pprof-disable` it opens a profiler on localhost:6060: both
 * closed here. Ready once its API accepts a connection.
 */
export function localGobgpServer(opts: LocalGobgpOptions, log: Logger): LocalProcess {
  const hint = 'run `npm start` or `node scripts/setup.mjs bgp` to install or build it, or set GOBGPD';
  const command =
    opts.server ??
    (opts.toolsDir && findExecutable(gobgpdBuildName, [opts.toolsDir])) ??
    requireExecutable('gobgpd', opts.binPath, hint);
  return new LocalProcess(
    {
      name: 'gobgpd',
      command,
      args: [
        ...['-f', writeGobgpConfig(opts), '-t', 'toml', '--api-hosts', `127.0.0.1:${opts.apiPort}`, '--pprof-disable', '--log-plain', '--log-level', 'info'],
        ...(opts.tls ? ['--tls', `--tls-cert-file=${opts.tls.certFile}`, `--tls-key-file=${opts.tls.keyFile}`] : []),
      ],
      dir: opts.dir,
      port: opts.apiPort,
      portSettings: opts.portSettings ?? [
        { port: opts.apiPort, setting: 'the gobgpd API port' },
        { port: opts.bgpPort, setting: 'the gobgpd BGP port' },
      ],
      isReady: () => portInUse(opts.apiPort),
      startTimeoutMs: 30_000,
    },
    log,
  );
}
