import dgram from 'node:dgram';
import { goflow2BinaryName, requireExecutable } from '../../engines/binaries';
import { EngineSupervisor, defaultSupervision } from '../../engines/supervisor';
import { createLogger } from '../../observability/logger';
import { createRegistry } from '../../observability/metrics';
import { loadConfig } from '../../service/config';
import { GoFlow2Process, type GoFlow2Config } from '../../workers/collector/goflow2-process';
import { freeUdpPorts } from '../support/udp';
import { waitFor } from '../support/wait';

/**
 * GoFlow2 counts as started only once the kernel holds its UDP listeners: a
 * datagram sent before the bind is dropped, so a start (or a restart) that
 * reported up earlier would lose the first flows of an exporter.
 */
const log = createLogger('silent');

async function goflow2Config(over: Partial<GoFlow2Config> = {}): Promise<GoFlow2Config> {
  const config = loadConfig(process.env);
  const binary = config.collector.goflow2 ?? requireExecutable(goflow2BinaryName, [config.toolsDir, ...config.binPath], 'run the set-up');
  const [netflowPort, sflowPort] = await freeUdpPorts(2);
  return { binary, host: '127.0.0.1', netflowPort: netflowPort!, sflowPort: sflowPort!, metricsPort: 0, workers: 1, queueSize: 1000, ...over };
}

const handlers = { onRun: () => undefined, onChunk: () => undefined };

/** Binds a plain (not reuse-port) UDP socket: refused while another socket holds the port. */
function bindUdp(port: number): Promise<dgram.Socket> {
  const socket = dgram.createSocket('udp4');
  return new Promise((resolve, reject) => {
    socket.once('error', reject);
    socket.bind(port, '127.0.0.1', () => resolve(socket));
  });
}

describe('GoFlow2 as a child process', () => {
  test('a start resolves only once both UDP listeners are bound', async () => {
    const config = await goflow2Config();
    const goflow2 = new GoFlow2Process(config, handlers, log);
    await goflow2.start();
    try {
      expect(await goflow2.listening()).toBe(true);
      await expect(bindUdp(config.netflowPort)).rejects.toMatchObject({ code: 'EADDRINUSE' });
      await expect(bindUdp(config.sflowPort)).rejects.toMatchObject({ code: 'EADDRINUSE' });
    } finally {
      await goflow2.stop();
    }
  });

  test('a start whose NetFlow port is taken fails at once, naming the port and the setting to change', async () => {
    const config = await goflow2Config({ bindTimeoutMs: 2_000 });
    const squatter = await bindUdp(config.netflowPort);
    const goflow2 = new GoFlow2Process(config, handlers, log);
    try {
      await expect(goflow2.start()).rejects.toThrow(`collector: udp port ${config.netflowPort} is taken by another process; set COLLECTOR_NETFLOW_PORT to a free port`);
      expect(goflow2.running).toBe(false);
    } finally {
      await goflow2.stop();
      squatter.close();
    }
  });

  test('a killed GoFlow2 is not listening again until the next run its supervisor starts has bound the ports', async () => {
    const config = await goflow2Config();
    const goflow2 = new GoFlow2Process(config, handlers, log);
    const supervisor = new EngineSupervisor(goflow2, defaultSupervision, { log, registry: createRegistry() });
    await supervisor.start();
    try {
      process.kill(goflow2.pid!, 'SIGKILL');
      await waitFor(() => Promise.resolve(goflow2.running ? undefined : true), 10_000, 'GoFlow2 to exit');
      expect(await goflow2.listening()).toBe(false);
      // The ports can be bound a moment before the supervisor's start of the next run returns and counts it.
      await waitFor(async () => ((await goflow2.listening()) && supervisor.restarts > 0 ? true : undefined), 10_000, 'the next run to listen');
      expect(supervisor.restarts).toBe(1);
      await expect(bindUdp(config.netflowPort)).rejects.toMatchObject({ code: 'EADDRINUSE' });
    } finally {
      await supervisor.stop();
    }
  });
});
