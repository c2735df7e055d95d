import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { gobgpProtoDir, localGobgpServer } from '../../engines/gobgp';
import { freePort, type LocalProcess } from '../../engines/local-process';
import { createLogger } from '../../observability/logger';
import { createRegistry } from '../../observability/metrics';
import { loadConfig } from '../../service/config';
import { MitigationLedger } from '../../streams/mitigation-ledger';
import { NatsClient } from '../../streams/nats-client';
import { names } from '../../streams/names';
import { BgpSpeaker, type Neighbour } from '../../workers/mitigation/bgp-speaker';
import { MitigationReconciler } from '../../workers/mitigation/mitigation-reconciler';
import { birdc, birdSocket, localBird } from '../../bench/bird';
import { metricTotal } from '../support/metrics';
import { speakerLease } from '../support/speaker-lease';
import { waitFor } from '../support/wait';

/**
 * The speaker's manners with the routers, as the service configures it (the
 * reconciler adds the neighbours): gobgpd (AS 65001, 127.0.0.1) peers over
 * eBGP with three BIRD 2 routers on loopback, each in its own AS. Router A
 * announces a route of its own, router B none, router C more prefixes than
 * the max-prefix allows.
 */
const log = createLogger(process.env.TEST_LOGS ? 'info' : 'silent');
const config = loadConfig(process.env);
const speakerAsn = 65001;
const discardNextHop = '192.0.2.1';
const maxPrefixes = 2;
const routerRoute = '203.0.113.128/25';

interface Router {
  name: string;
  address: string;
  asn: number;
  announce: string[];
  port?: number;
  process?: LocalProcess;
}

describe('the BGP speaker between routers', () => {
  const prefix = `t${randomBytes(5).toString('hex')}`;
  const routers: Router[] = [
    { name: 'a', address: '127.0.0.2', asn: 65002, announce: [routerRoute] },
    { name: 'b', address: '127.0.0.3', asn: 65003, announce: [] },
    { name: 'c', address: '127.0.0.4', asn: 65004, announce: ['198.18.0.0/24', '198.18.1.0/24', '198.18.2.0/24'] },
  ];
  let dir: string;
  let gobgpd: LocalProcess;
  let nats: NatsClient;
  let ledger: MitigationLedger;
  let speaker: BgpSpeaker;
  let reconciler: MitigationReconciler;
  let lease: Awaited<ReturnType<typeof speakerLease>>;
  const registry = createRegistry();
  const router = (name: string) => routers.find((r) => r.name === name)!;
  const birdOf = (name: string, args: string[]) => birdc(birdSocket(path.join(dir, `bird-${name}`)), config.binPath, args);
  const routesOf = (name: string) => birdOf(name, ['show', 'route', 'table', 'master4', 'all']);
  const sessionOf = async (address: string) => (await speaker.neighbours()).find((n) => n.address === address)?.state;

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bgp-peering-'));
    const [bgpPort, apiPort] = await Promise.all([freePort(), freePort()]);
    gobgpd = localGobgpServer({ dir: path.join(dir, 'gobgpd'), bgpPort, apiPort, asn: speakerAsn, routerId: '127.0.0.1', binPath: config.binPath, toolsDir: config.toolsDir }, log);
    await gobgpd.start();
    for (const r of routers) r.port = await freePort();
    nats = new NatsClient({ url: process.env.TEST_NATS_URL!, name: 'bgp-peering-test' }, log);
    await nats.start();
    ledger = new MitigationLedger({ nats, prefix, replicas: 1, signingKey: randomBytes(32).toString('base64url') });
    await ledger.start();
    speaker = new BgpSpeaker({ address: `127.0.0.1:${apiPort}`, protoDir: gobgpProtoDir(config.toolsDir) });
    await speaker.start();
    lease = await speakerLease({ nats, prefix, speakerAddress: `127.0.0.1:${apiPort}`, registry, log });
    const neighbours: Neighbour[] = routers.map((r) => ({
      address: r.address, asn: r.asn, port: r.port, localAddress: '127.0.0.1', multihop: true, connectRetrySeconds: 1, holdTimeSeconds: 9, maxPrefixes,
    }));
    reconciler = new MitigationReconciler(
      { intervalMs: 200, neighbours, keepEndedMs: 60_000 },
      { speaker, ledger, lease: lease.reconcilerLease, approvedPrefixes: () => Promise.resolve(['198.51.100.0/24']), registry, log },
    );
    await reconciler.start();
    // The routers start once the speaker knows them: a router that reached gobgpd first had its
    // connection closed, and BIRD waits out its error wait (60 s at first) before it tries again.
    await waitFor(async () => ((await speaker.neighbours()).length === routers.length ? true : undefined), 30_000, 'the routers configured on the speaker');
    for (const r of routers) {
      const speakerAt = { address: '127.0.0.1', port: bgpPort, asn: speakerAsn };
      r.process = localBird({ dir: path.join(dir, `bird-${r.name}`), binPath: config.binPath, address: r.address, port: r.port!, asn: r.asn, speaker: speakerAt, discardNextHop, announce: r.announce }, log);
      await r.process.start();
    }
    for (const r of routers.filter((x) => x.name !== 'c')) {
      await waitFor(async () => ((await sessionOf(r.address)) === 'ESTABLISHED' ? true : undefined), 30_000, `the BGP session with router ${r.name}`);
    }
  }, 90_000);

  afterAll(async () => {
    await reconciler?.stop();
    await speaker?.stop();
    await nats?.jsm.streams.delete(`KV_${names(prefix).mitigationsBucket}`).catch(() => undefined);
    await lease?.remove();
    await nats?.stop();
    await Promise.all([gobgpd?.stop(), ...routers.map((r) => r.process?.stop())]);
    fs.rmSync(dir, { recursive: true, force: true });
  });

  test('a route router A announces to the speaker never reaches router B, while the service’s own mitigation reaches both', async () => {
    await ledger.put({ id: 'rtbh', org_id: 'org_a', mitigation: { action: 'blackhole', destination: '198.51.100.9/32', nextHop: discardNextHop }, starts_at: Date.now() - 1_000, ends_at: Date.now() + 600_000 });
    for (const name of ['a', 'b']) {
      await waitFor(async () => ((await routesOf(name)).includes('198.51.100.9/32') ? true : undefined), 20_000, `the mitigation in router ${name}`);
    }
    // Router A did send its route: BIRD counts it exported to the speaker.
    const stats = await birdOf('a', ['show', 'protocols', 'all', 'speaker']);
    expect(stats).toMatch(/Routes:\s+\d+ imported, 1 exported/);
    // Had the speaker passed it on, router B would hold it within milliseconds; five passes of the reconciler later it still does not.
    const passes = await metricTotal(registry, 'nettel_mitigation_reconciles_total');
    await waitFor(async () => ((await metricTotal(registry, 'nettel_mitigation_reconciles_total')) >= passes + 5 ? true : undefined), 20_000, 'five more passes');
    expect(await routesOf('b')).not.toContain(routerRoute);
    expect(await routesOf('a')).toContain(routerRoute);
    expect(await speaker.announced()).toEqual([{ action: 'blackhole', destination: '198.51.100.9/32', nextHop: discardNextHop }]);
  });

  test('a router that sends more prefixes than the max-prefix has its session ended by the speaker, and the others keep theirs', async () => {
    // The speaker's own record, not router C's log: under load router C has seen its session end
    // with only the connection closed, never gobgpd's Cease (CI, and a full run here; gobgpd v3.10.0
    // marks the neighbour PFX_CT in pkg/server/fsm.go sendMessageloop just before it writes the
    // Cease; why the Cease was not read was not traced). PFX_CT is set by the prefix limit alone,
    // and gobgpd then keeps the session down.
    const c = router('c').address;
    const ended = await waitFor(async () => {
      const seen = (await speaker.neighbours()).find((n) => n.address === c);
      return seen?.adminState === 'PFX_CT' ? seen : undefined;
    }, 45_000, 'the speaker to end router C\'s session for its prefixes').catch(async (err: Error) => {
      // What each side saw, for the next reader of a failure.
      const status = await birdOf('c', ['show', 'protocols', 'all', 'speaker']).catch((e: Error) => e.message);
      const seen = JSON.stringify((await speaker.neighbours()).find((n) => n.address === c));
      throw new Error(`${err.message}\nrouter C: ${status}\nthe speaker's view of C: ${seen}`);
    });
    expect(ended.state).not.toBe('ESTABLISHED');
    expect(await birdOf('c', ['show', 'protocols', 'speaker'])).not.toMatch(/Established/);
    expect(await sessionOf(router('a').address)).toBe('ESTABLISHED');
    expect(await sessionOf(router('b').address)).toBe('ESTABLISHED');
  });
});
