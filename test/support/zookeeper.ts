import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { requireExecutable } from '../../engines/binaries';
import type { LocalEngineOptions } from '../../engines/engines';
import { LocalProcess } from '../../engines/local-process';
import type { Logger } from '../../observability/logger';

/** Debian's ZooKeeper (3.8), which the set-up installs without starting its daemon; its manifest names the jars it needs. */
export const zooKeeperJar = '/usr/share/java/zookeeper.jar';

/**
 * A standalone ZooKeeper for the ClickHouse replication tests, run as a plain
 * foreground Java process (ZooKeeperServerMain, as `zkServer.sh
 * start-foreground` runs it) with a config of its own: loopback only, its
 * data under `dir`, the admin server (an HTTP port of its own) off, and only
 * the `srvr` four-letter word, which tells when it serves.
 */
export function localZooKeeper(opts: LocalEngineOptions, log: Logger): LocalProcess {
  const java = requireExecutable('java', opts.binPath, 'run `npm test` or `node scripts/setup.mjs test` as root on Debian (it installs zookeeper and its Java)');
  if (!fs.existsSync(zooKeeperJar)) throw new Error(`${zooKeeperJar} not found; run \`node scripts/setup.mjs test\` as root on Debian, or install Debian's zookeeper`);
  return new LocalProcess(
    {
      name: 'zookeeper',
      command: java,
      // Its folder on the command line: LocalProcess adopts only a process started on this folder.
      args: ['-Xmx128m', '-XX:+UseSerialGC', `-Dzookeeper.log.dir=${path.resolve(opts.dir)}`, '-cp', zooKeeperJar, 'org.apache.zookeeper.server.ZooKeeperServerMain', writeZooKeeperConfig(opts)],
      dir: opts.dir,
      port: opts.port,
      // Not `ruok`: once it had answered imok, a replica's first handshake was still cut (and 18.16 died of it, a NULL
      // ZooKeeper in its DDL worker); `srvr` names the mode once the server has loaded its data and takes sessions.
      isReady: () => fourLetterWord(opts.port, 'srvr').then((answer) => answer.includes('Mode: standalone')),
    },
    log,
  );
}

function writeZooKeeperConfig(opts: LocalEngineOptions): string {
  const dir = path.resolve(opts.dir);
  const file = path.join(dir, 'zoo.cfg');
  // A short tick: sessions of a killed client expire within seconds (ClickHouse asks for its own timeout, bounded by 2 to 20 ticks).
  const cfg = [
    'tickTime=500',
    `dataDir=${dir}/data`,
    `clientPort=${opts.port}`,
    'clientPortAddress=127.0.0.1',
    'admin.enableServer=false',
    '4lw.commands.whitelist=srvr',
    'maxClientCnxns=0',
    '',
  ].join('\n');
  fs.mkdirSync(path.join(dir, 'data'), { recursive: true });
  fs.writeFileSync(file, cfg);
  return file;
}

/** Sends a four-letter word and reads the answer until the server closes the connection. */
function fourLetterWord(port: number, word: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ port, host: '127.0.0.1' }, () => socket.write(word));
    let answer = '';
    socket.setTimeout(2000);
    socket.on('data', (chunk) => (answer += String(chunk)));
    socket.once('end', () => resolve(answer));
    socket.once('timeout', () => socket.destroy(new Error(`no answer to ${word}`)));
    socket.once('error', reject);
  });
}
