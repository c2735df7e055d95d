import path from 'node:path';
import { localGobgpServer } from '../engines/gobgp';
import { freePort, type LocalProcess } from '../engines/local-process';
import type { Logger } from '../observability/logger';
import type { Config } from '../service/config';
import { birdc, birdSocket, localBird } from './bird';

/**
 * The BGP peers of the automation scenario, as the automation test runs them:
 * a gobgpd the service announces through, and a BIRD 2 it announces to, on
 * loopback high ports (gobgpd on 127.0.0.1, BIRD on 127.0.0.2 alone). Only
 * the stack's own service is pointed at this gobgpd: a second reconciler on
 * the same speaker would withdraw the first one's routes.
 */
export interface BenchRouter {
  engines: LocalProcess[];
  /** BIRD's folder: its control socket and its log of route changes. */
  birdDir: string;
  /** What the stack's service is started with to announce through this gobgpd to this BIRD. */
  serviceEnv: Record<string, string>;
  /** Resolves once BIRD's session with gobgpd is up (the service's reconciler adds BIRD as gobgpd's neighbour). */
  established(timeoutMs: number): Promise<void>;
}

const asn = 65001;
const discardNextHop = '192.0.2.1';

export async function benchRouter(config: Config, dir: string, log: Logger): Promise<BenchRouter> {
  const [bgpPort, apiPort, birdPort] = await Promise.all([freePort(), freePort(), freePort()]);
  const birdDir = path.join(dir, 'bird');
  const gobgpd = localGobgpServer({ dir: path.join(dir, 'gobgpd'), bgpPort, apiPort, asn, routerId: '127.0.0.1', binPath: config.binPath, toolsDir: config.toolsDir }, log);
  const bird = localBird({ dir: birdDir, binPath: config.binPath, address: '127.0.0.2', port: birdPort, asn, speaker: { address: '127.0.0.1', port: bgpPort, asn }, discardNextHop }, log);
  const protocols = () => birdc(birdSocket(birdDir), config.binPath, ['show', 'protocols']).catch(() => '');
  return {
    engines: [gobgpd, bird],
    birdDir,
    serviceEnv: { BGP_SPEAKER_ADDRESS: `127.0.0.1:${apiPort}`, BGP_NEIGHBORS: `127.0.0.2:${birdPort}@${asn}`, BGP_BLACKHOLE_NEXT_HOP_V4: discardNextHop },
    async established(timeoutMs) {
      const deadline = Date.now() + timeoutMs;
      while (!(await protocols()).includes('Established')) {
        if (Date.now() > deadline) throw new Error('timed out waiting for the BGP session between gobgpd and BIRD');
        await new Promise((r) => setTimeout(r, 200));
      }
    },
  };
}
