import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { gobgpProtoDir, localGobgpServer } from '../../engines/gobgp';
import { freePort, type LocalProcess } from '../../engines/local-process';
import { createLogger } from '../../observability/logger';
import { loadConfig } from '../../service/config';
import { BgpSpeaker, SpeakerUnavailableError } from '../../workers/mitigation/bgp-speaker';
import type { Mitigation } from '../../core/mitigation';
import { birdc, birdFlowTable, birdFlowTable6, birdSocket, localBird } from '../../bench/bird';
import { waitFor } from '../support/wait';

/**
 * The speaker against a real router: gobgpd (127.0.0.1) peers with BIRD 2
 * (127.0.0.2) over loopback on free ports, and what the adapter announces or
 * withdraws is read from BIRD's own tables.
 */
const log = createLogger('silent');
const config = loadConfig(process.env);
const asn = 65001;
const discardNextHop = '192.0.2.1';

const blackhole: Mitigation = { action: 'blackhole', destination: '198.51.100.7/32', nextHop: discardNextHop, communities: ['65001:42'] };
const discard: Mitigation = {
  action: 'flowspec_discard',
  match: { destination: '198.51.100.0/24', protocols: [17], sourcePorts: [53, 123], packetLength: { min: 512, max: 1500 } },
};
const rateLimit: Mitigation = { action: 'flowspec_rate_limit', match: { destination: '203.0.113.0/24', protocols: [6], destinationPorts: [443] }, bytesPerSecond: 125_000 };
/** As core/automation-plan.ts plans them: TCP flags in bit order, an IPv6 host route in compressed lower case. */
const synFlood: Mitigation = { action: 'flowspec_discard', match: { destination: '198.51.100.8/32', protocols: [6], destinationPorts: [80], tcpFlags: ['syn', 'ack'] } };
const discard6: Mitigation = { action: 'flowspec_discard', match: { destination: '2001:db8::7/128', protocols: [17], sourcePorts: [123], packetLength: { min: 512, max: 1500 } } };
const rateLimit6: Mitigation = { action: 'flowspec_rate_limit', match: { destination: '2001:db8:1::/48', tcpFlags: ['rst'] }, bytesPerSecond: 125_000 };

/** The local addresses a process listens on (TCP and UDP), as `ss` reports them. */
async function listeningAddresses(pid: number): Promise<string[]> {
  const { stdout } = await promisify(execFile)('ss', ['-Hltunp']);
  return stdout
    .split('\n')
    .filter((line) => line.includes(`pid=${pid},`))
    .map((line) => line.trim().split(/\s+/)[4]!);
}

describe('the BGP speaker, peered with BIRD 2', () => {
  let dir: string;
  let gobgpd: LocalProcess;
  let bird: LocalProcess;
  let speaker: BgpSpeaker;
  const routes = (table = 'master4') => birdc(birdSocket(path.join(dir, 'bird')), config.binPath, ['show', 'route', 'table', table, 'all']);
  const waitForRoutes = (table: string, check: (text: string) => boolean, what: string) =>
    waitFor(async () => {
      const text = await routes(table);
      return check(text) ? text : undefined;
    }, 15_000, what);

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bgp-speaker-'));
    const [bgpPort, apiPort, birdPort] = await Promise.all([freePort(), freePort(), freePort()]);
    gobgpd = localGobgpServer({ dir: path.join(dir, 'gobgpd'), bgpPort: bgpPort, apiPort: apiPort, asn, routerId: '127.0.0.1', binPath: config.binPath }, log);
    bird = localBird(
      { dir: path.join(dir, 'bird'), binPath: config.binPath, address: '127.0.0.2', port: birdPort, asn, speaker: { address: '127.0.0.1', port: bgpPort, asn }, discardNextHop },
      log,
    );
    await Promise.all([gobgpd.start(), bird.start()]);
    speaker = new BgpSpeaker({ address: `127.0.0.1:${apiPort}`, protoDir: gobgpProtoDir(config.toolsDir) });
    await speaker.start();
    await speaker.addNeighbour({ address: '127.0.0.2', asn, port: birdPort, localAddress: '127.0.0.1', connectRetrySeconds: 1 });
    await waitFor(async () => ((await speaker.neighbours())[0]?.state === 'ESTABLISHED' ? true : undefined), 20_000, 'the BGP session with BIRD');
  }, 45_000);

  afterAll(async () => {
    await speaker?.stop();
    await Promise.all([gobgpd?.stop(), bird?.stop()]);
    fs.rmSync(dir, { recursive: true, force: true });
  });

  test('gobgpd (its BGP port and its API) and BIRD listen on loopback only', async () => {
    const speakerAddresses = await listeningAddresses(gobgpd.pid!);
    const routerAddresses = await listeningAddresses(bird.pid!);
    expect(speakerAddresses.length).toBeGreaterThanOrEqual(2);
    expect(routerAddresses.length).toBeGreaterThanOrEqual(1);
    for (const address of [...speakerAddresses, ...routerAddresses]) expect(address).toMatch(/^127\.0\.0\.[12]:\d+$/);
  });

  test('an RTBH announce reaches BIRD with the BLACKHOLE community and the operator’s', async () => {
    await speaker.announce(blackhole);
    const text = await waitForRoutes('master4', (t) => t.includes('198.51.100.7/32'), 'the RTBH route in BIRD');
    expect(text).toMatch(/BGP\.community:.*\(65001,42\)/);
    expect(text).toMatch(/BGP\.community:.*\(65535,666\)/);
    expect(text).toMatch(/blackhole/);
  });

  test('a Flowspec discard and a rate limit reach BIRD’s flow4 table with their traffic rates', async () => {
    await speaker.announce(discard);
    await speaker.announce(rateLimit);
    const text = await waitForRoutes(birdFlowTable, (t) => t.includes('198.51.100.0/24') && t.includes('203.0.113.0/24'), 'both flowspec rules in BIRD');
    expect(text).toMatch(/flow4 \{ dst 198\.51\.100\.0\/24; proto 17; sport 53,123; length 512\.\.1500; \}/);
    expect(text).toMatch(/flow4 \{ dst 203\.0\.113\.0\/24; proto 6; dport 443; \}/);
    expect(text).toMatch(/\(generic, 0x80060000, 0x0\)/);
    expect(text).toMatch(/\(generic, 0x80060000, 0x47f42400\)/);
  });

  test('a Flowspec rule on TCP flags reaches BIRD as packets with all of those flags set', async () => {
    await speaker.announce(synFlood);
    const text = await waitForRoutes(birdFlowTable, (t) => t.includes('198.51.100.8/32'), 'the TCP flags rule in BIRD');
    // BIRD writes a bitmask match as value/mask: syn|ack = 0x12, both required.
    expect(text).toMatch(/flow4 \{ dst 198\.51\.100\.8\/32; proto 6; dport 80; tcp flags 0x12\/0x12; \}/);
  });

  test('IPv6 Flowspec rules (RFC 8956) reach BIRD’s flow6 table', async () => {
    await speaker.announce(discard6);
    await speaker.announce(rateLimit6);
    const text = await waitForRoutes(birdFlowTable6, (t) => t.includes('2001:db8::7/128') && t.includes('2001:db8:1::/48'), 'both IPv6 flowspec rules in BIRD');
    expect(text).toMatch(/flow6 \{ dst 2001:db8::7\/128; next header 17; sport 123; length 512\.\.1500; \}/);
    expect(text).toMatch(/flow6 \{ dst 2001:db8:1::\/48; tcp flags 0x4\/0x4; \}/);
    expect(text).toMatch(/\(generic, 0x80060000, 0x0\)/);
    expect(text).toMatch(/\(generic, 0x80060000, 0x47f42400\)/);
  });

  test('the speaker lists what it announces, as the mitigations it was given', async () => {
    const announced = await speaker.announced();
    expect(announced).toEqual(expect.arrayContaining([blackhole, discard, rateLimit, synFlood, discard6, rateLimit6]));
    expect(announced).toHaveLength(6);
  });

  test('an IPv6 Flowspec withdraw removes the rule from BIRD’s flow6 table, and leaves the other', async () => {
    await speaker.withdraw(discard6);
    const flows = await waitForRoutes(birdFlowTable6, (t) => !t.includes('2001:db8::7/128'), 'the IPv6 discard rule to leave BIRD');
    expect(flows).toContain('2001:db8:1::/48');
    await speaker.withdraw(rateLimit6);
    await waitForRoutes(birdFlowTable6, (t) => !t.includes('2001:db8:1::/48'), 'the IPv6 rate limit to leave BIRD');
    await speaker.withdraw(synFlood);
    await waitForRoutes(birdFlowTable, (t) => !t.includes('198.51.100.8/32'), 'the TCP flags rule to leave BIRD');
  });

  test('a withdraw removes the route from BIRD, and leaves the others', async () => {
    await speaker.withdraw(blackhole);
    await waitForRoutes('master4', (t) => !t.includes('198.51.100.7/32'), 'the RTBH route to leave BIRD');
    await speaker.withdraw(discard);
    const flows = await waitForRoutes(birdFlowTable, (t) => !t.includes('198.51.100.0/24'), 'the discard rule to leave BIRD');
    expect(flows).toContain('203.0.113.0/24');
    expect(await speaker.announced()).toEqual([rateLimit]);
  });

  test('a kill -9 of gobgpd makes BIRD drop its routes, and the adapter then reports the speaker unavailable', async () => {
    await speaker.announce(blackhole);
    await waitForRoutes('master4', (t) => t.includes('198.51.100.7/32'), 'the RTBH route in BIRD');
    gobgpd.kill();
    await waitForRoutes('master4', (t) => !t.includes('198.51.100.7/32'), 'BIRD to drop the RTBH route');
    await waitForRoutes(birdFlowTable, (t) => !t.includes('203.0.113.0/24'), 'BIRD to drop the rate limit');
    await expect(speaker.announce(blackhole)).rejects.toBeInstanceOf(SpeakerUnavailableError);
  });
});
