import path from 'node:path';
import { birdc, birdFlowTable, birdSocket, localBird } from '../../../bench/bird';
import { localGobgpServer } from '../../../engines/gobgp';
import { freePort } from '../../../engines/local-process';
import type { Logger } from '../../../observability/logger';
import { loadConfig } from '../../../service/config';

export interface BgpRouter {
  /** What the temporal-worker role needs to announce through the speaker to the router. */
  speakerEnv: Record<string, string>;
  /** Whether BIRD holds a route for `prefix` (`198.51.100.7/32`) in its main IPv4 table. */
  holds(prefix: string): Promise<boolean>;
  /** BIRD's IPv4 Flowspec table, as `birdc show route table flowtab4 all` prints it. */
  flowRules(): Promise<string>;
  /** The updates and withdrawals BIRD has received from the speaker since their session came up (its import statistics). */
  received(): Promise<{ updates: number; withdrawals: number }>;
  stop(): Promise<void>;
}

const asn = 65001;

/**
 * A BGP speaker (gobgpd, as the operator runs it beside the service) peered
 * with a router (BIRD) on loopback, as automation-crash.test.ts pairs them:
 * the temporal-worker announces mitigations through the speaker, the test
 * reads what the router holds.
 */
export async function startBgpRouter(dir: string, log: Logger): Promise<BgpRouter> {
  const { binPath, toolsDir } = loadConfig(process.env);
  const [bgpPort, apiPort, birdPort] = await Promise.all([freePort(), freePort(), freePort()]);
  const gobgpd = localGobgpServer({ dir: path.join(dir, 'gobgpd'), bgpPort, apiPort, asn, routerId: '127.0.0.1', binPath, toolsDir }, log);
  const birdDir = path.join(dir, 'bird');
  const bird = localBird({ dir: birdDir, binPath, address: '127.0.0.2', port: birdPort, asn, speaker: { address: '127.0.0.1', port: bgpPort, asn }, discardNextHop: '192.0.2.1' }, log);
  await Promise.all([gobgpd.start(), bird.start()]);
  return {
    speakerEnv: { BGP_SPEAKER_ADDRESS: `127.0.0.1:${apiPort}`, BGP_NEIGHBORS: `127.0.0.2:${birdPort}@${asn}` },
    holds: async (prefix) => (await birdc(birdSocket(birdDir), binPath, ['show', 'route', 'table', 'master4', 'all'])).includes(prefix),
    flowRules: () => birdc(birdSocket(birdDir), binPath, ['show', 'route', 'table', birdFlowTable, 'all']),
    received: async () => {
      const text = await birdc(birdSocket(birdDir), binPath, ['show', 'protocols', 'all', 'speaker']);
      const stat = (name: string) => Number(new RegExp(`${name}:\\s+(\\d+)`).exec(text)?.[1] ?? NaN);
      return { updates: stat('Import updates'), withdrawals: stat('Import withdraws') };
    },
    stop: async () => {
      await Promise.all([gobgpd.stop(), bird.stop()]);
    },
  };
}
