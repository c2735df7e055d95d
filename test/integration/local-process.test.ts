import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { LocalProcess, freePort, portInUse } from '../../engines/local-process';
import { createLogger } from '../../observability/logger';
import { waitFor } from '../support/wait';

/**
 * A local engine left running by an earlier start is adopted only when it
 * runs the binary this release would start: one left by an earlier release
 * (Debian's nats-server 2.9.10 before the set-up built 2.15.2) is replaced.
 * The engines here are node processes listening on a port; the "earlier
 * release" is a copy of node at another path.
 */
const listen = (port: number) => `require('node:net').createServer().listen(${port}, '127.0.0.1'); setInterval(() => {}, 1000);`;
const listening = (port: number) => waitFor(async () => ((await portInUse(port)) ? true : undefined), 10_000, `a listener on port ${port}`);

describe('a local engine left running', () => {
  let dir: string;
  let port: number;
  const started: number[] = [];
  beforeEach(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'nettel-local-process-'));
    port = await freePort();
  });
  afterEach(() => {
    for (const pid of started) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // Gone already.
      }
    }
    fs.rmSync(dir, { recursive: true, force: true });
  });

  /** Starts `binary` as if an earlier start had, with its pid file, and waits for its port. */
  async function leftRunning(binary: string): Promise<number> {
    const child = spawn(binary, ['-e', listen(port), dir], { detached: true, stdio: 'ignore' });
    child.unref();
    started.push(child.pid!);
    fs.writeFileSync(path.join(dir, 'engine.pid'), String(child.pid));
    await listening(port);
    return child.pid!;
  }

  // Like every engine's, its command line names its folder (here as an argument the script ignores).
  const engineOf = (command: string) => new LocalProcess({ name: 'engine', command, args: ['-e', listen(port), dir], dir, port }, createLogger('silent'));

  test('running the same binary, it is adopted', async () => {
    const pid = await leftRunning(process.execPath);
    const engine = engineOf(process.execPath);
    await engine.start();
    expect(engine.pid).toBe(pid);
    await engine.stop();
  });

  test('a process that reuses the pid of an engine, started on no folder of ours, is neither adopted nor stopped', async () => {
    const stranger = spawn(process.execPath, ['-e', listen(port)], { detached: true, stdio: 'ignore' });
    stranger.unref();
    started.push(stranger.pid!);
    fs.writeFileSync(path.join(dir, 'engine.pid'), String(stranger.pid));
    await listening(port);
    await expect(engineOf(process.execPath).start()).rejects.toThrow(`port ${port} is taken`);
    expect(() => process.kill(stranger.pid!, 0)).not.toThrow();
  });

  test('a port taken by another process is named with the setting that moves it', async () => {
    const stranger = spawn(process.execPath, ['-e', listen(port)], { detached: true, stdio: 'ignore' });
    stranger.unref();
    started.push(stranger.pid!);
    await listening(port);
    const engine = new LocalProcess(
      { name: 'nats-server', command: process.execPath, args: ['-e', listen(port), dir], dir, port, portSettings: [{ port, setting: 'EMBEDDED_NATS_PORT' }] },
      createLogger('silent'),
    );
    await expect(engine.start()).rejects.toThrow(`nats-server: port ${port} is taken by another process; set EMBEDDED_NATS_PORT to a free port, or stop what listens there`);
  });

  test('running another binary, it is stopped and the configured one started', async () => {
    const older = path.join(dir, 'older-node');
    fs.copyFileSync(process.execPath, older);
    fs.chmodSync(older, 0o755);
    const pid = await leftRunning(older);
    const engine = engineOf(process.execPath);
    await engine.start();
    started.push(engine.pid!);
    expect(engine.pid).not.toBe(pid);
    expect(() => process.kill(pid, 0)).toThrow();
    await engine.stop();
  });
});

describe('a free port for a test engine', () => {
  const ephemeralLow = Number(fs.readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);

  test('is below the kernel ephemeral range, so no outgoing connection can take it before the engine binds', async () => {
    const ports = await Promise.all(Array.from({ length: 20 }, () => freePort()));
    for (const port of ports) {
      expect(port).toBeGreaterThanOrEqual(10_000);
      expect(port).toBeLessThan(ephemeralLow);
    }
  });

  test('is never handed out twice by one process', async () => {
    const ports = await Promise.all(Array.from({ length: 200 }, () => freePort()));
    expect(new Set(ports).size).toBe(ports.length);
  });
});
