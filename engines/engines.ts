import fs from 'node:fs';
import path from 'node:path';
import type { Logger } from '../observability/logger';
import { natsServerBinaryName, requireExecutable } from './binaries';
import { LocalProcess, portInUse } from './local-process';

/**
 * The local engines of the embedded default: each is started only when no
 * address points the stack at a running one.
 */
export interface LocalEngineOptions {
  dir: string;
  port: number;
  binPath: readonly string[];
  /** The settings that choose the engine's ports, named in the error when one is taken. */
  portSettings?: Array<{ port: number; setting: string }>;
}

const setupHint = 'run `npm start` or `node scripts/setup.mjs` as root on Debian, or install it yourself';

/** The embedded nats-server's own settings, beside where it runs. */
export interface LocalNatsOptions extends LocalEngineOptions {
  /** Where the set-up puts the nats-server it builds. */
  toolsDir: string;
  /** A nats-server binary to run instead of the set-up's build. */
  server?: string;
  /** JetStream's bound on its file store (`max_file_store`), in bytes. */
  maxFileStoreBytes: number;
  /**
   * `always` (the default): the server syncs each write to disk before it
   * acknowledges it. `interval`: the server's own default (every two
   * minutes), which only the bench's comparison asks for.
   */
  sync?: 'always' | 'interval';
  /**
   * The one user clients must authenticate as (the embedded default generates
   * its password); without it the server takes any client that reaches it,
   * which only the tests' own servers do.
   */
  auth?: { user: string; password: string };
}

export function localNatsServer(opts: LocalNatsOptions, log: Logger): LocalProcess {
  const command =
    opts.server ?? requireExecutable(natsServerBinaryName, [opts.toolsDir, ...opts.binPath], 'run `npm start` or `node scripts/setup.mjs nats-server` to build it, or set NATS_SERVER');
  return new LocalProcess(
    {
      name: 'nats-server',
      command,
      args: ['-c', writeNatsConfig(opts)],
      dir: opts.dir,
      port: opts.port,
      portSettings: opts.portSettings,
      // A server left running by an earlier start reads the config written above again: its credentials too.
      reloadSignal: 'SIGHUP',
    },
    log,
  );
}

/**
 * NATS advises against payloads over 8 MB: larger ones hold up every other
 * message on the connection and the route. A request larger than this once
 * stamped travels as several messages (streams/telemetry-publisher.ts).
 */
export const natsMaxPayload = 8 * 1024 * 1024;

/**
 * Loopback only, JetStream on. `sync_interval: always` makes the server sync
 * every write to disk before it acknowledges it, so an acknowledged publish
 * survives a machine crash, not only a process kill; the store is bounded so
 * a backlog cannot take the whole disk. `max_pending` (64 MiB by default) is
 * what the server holds for a client that has not read it yet before cutting
 * it as a slow consumer: a stream worker's pull of 256 messages of a megabyte
 * or more, while the API's parsing holds the same event loop, passed it in
 * `npm run bench`, and every publish of the process then failed (503).
 */
export const natsMaxPendingBytes = 512 * 1024 * 1024;

/**
 * How long the server may block writing to a client before it cuts it as a
 * slow consumer (10 s by default). Under the collector scenario at 300,000
 * flows/s offered on a 2-core machine the service's process left 15 MB
 * unread for 10 s: the server cut it, every consumer and publish of the
 * process failed, the collector stopped reading GoFlow2 and 92 % of the
 * round's flows were dropped. A client that reads nothing for a minute is
 * hung, not busy, and is still cut; `max_pending` bounds what is held for it.
 */
export const natsWriteDeadline = '60s';

export function natsConfigText(opts: Omit<LocalNatsOptions, 'binPath' | 'toolsDir'>): string {
  const dir = path.resolve(opts.dir);
  const sync = (opts.sync ?? 'always') === 'always' ? '  sync_interval: always\n' : '';
  // JSON strings are nats-server config strings: the password is quoted and escaped whatever it holds.
  const auth = opts.auth ? `authorization {\n  user: ${JSON.stringify(opts.auth.user)}\n  password: ${JSON.stringify(opts.auth.password)}\n}\n` : '';
  return (
    `listen: "127.0.0.1:${opts.port}"\nmax_payload: ${natsMaxPayload}\nmax_pending: ${natsMaxPendingBytes}\nwrite_deadline: "${natsWriteDeadline}"\n` +
    `jetstream {\n  store_dir: "${path.join(dir, 'store')}"\n  max_file_store: ${opts.maxFileStoreBytes}\n${sync}}\n` +
    auth
  );
}

/** The config holds the password: readable by its owner only, like the secret it comes from. */
function writeNatsConfig(opts: LocalNatsOptions): string {
  const dir = path.resolve(opts.dir);
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, 'nats.conf');
  fs.writeFileSync(file, natsConfigText(opts), { mode: 0o600 });
  fs.chmodSync(file, 0o600);
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
      portSettings: opts.portSettings,
      isReady: () => portInUse(opts.port),
      startTimeoutMs: 120_000,
    },
    log,
  );
}
