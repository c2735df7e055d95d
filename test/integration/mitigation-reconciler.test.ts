import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { gobgpProtoDir, localGobgpServer } from '../../engines/gobgp';
import { freePort, type LocalProcess } from '../../engines/local-process';
import { EngineSupervisor } from '../../engines/supervisor';
import { createLogger } from '../../observability/logger';
import { createRegistry } from '../../observability/metrics';
import { loadConfig } from '../../service/config';
import { MitigationLedger, type MitigationRecord } from '../../streams/mitigation-ledger';
import { NatsClient } from '../../streams/nats-client';
import { names } from '../../streams/names';
import { BgpSpeaker } from '../../workers/mitigation/bgp-speaker';
import { MitigationReconciler } from '../../workers/mitigation/mitigation-reconciler';
import type { Mitigation } from '../../core/mitigation';
import { birdc, birdFlowTable, birdFlowTable6, birdSocket, localBird } from '../../bench/bird';
import { metricTotal } from '../support/metrics';
import { speakerLease } from '../support/speaker-lease';
import { waitFor } from '../support/wait';

/**
 * The ledger is the truth: the reconciler makes a real gobgpd, peered with
 * BIRD 2 over loopback, announce what the ledger (a JetStream key-value
 * bucket on the tests' nats-server) holds active, and nothing else, also
 * after gobgpd is killed -9 and comes back empty.
 */
const log = createLogger(process.env.TEST_LOGS ? 'info' : 'silent');
const config = loadConfig(process.env);
const asn = 65001;
const discardNextHop = '192.0.2.1';
const blackhole: Mitigation = { action: 'blackhole', destination: '198.51.100.9/32', nextHop: discardNextHop };
const discard: Mitigation = { action: 'flowspec_discard', match: { destination: '203.0.113.0/24', protocols: [17], sourcePorts: [123] } };
/** As core/automation-plan.ts plans a SYN-flood rule on an IPv6 incident destination. */
const synFlood6: Mitigation = { action: 'flowspec_rate_limit', match: { destination: '2001:db8::9/128', protocols: [6], tcpFlags: ['syn'] }, bytesPerSecond: 125_000 };

/** A counter's value for one `change` label. */
async function changes(registry: ReturnType<typeof createRegistry>, change: string): Promise<number> {
  const metric = registry.getSingleMetric('nettel_mitigation_reconcile_changes_total');
  return ((await metric?.get())?.values ?? []).filter((v) => v.labels.change === change).reduce((sum, v) => sum + v.value, 0);
}

describe('the mitigation reconciler, with gobgpd peered with BIRD 2', () => {
  const prefix = `t${randomBytes(5).toString('hex')}`;
  const registry = createRegistry();
  let dir: string;
  let gobgpd: LocalProcess;
  let supervisor: EngineSupervisor;
  let bird: LocalProcess;
  let nats: NatsClient;
  let ledger: MitigationLedger;
  let speaker: BgpSpeaker;
  let reconciler: MitigationReconciler;
  let lease: Awaited<ReturnType<typeof speakerLease>>;
  /** The prefixes approved per workspace, as storage/prefixes-repo.ts answers them: the platform admin's revocation is a change here. */
  const approved = new Map<string, string[]>([['org_a', ['198.51.100.0/24', '203.0.113.0/24', '2001:db8::/32']]]);
  const table = (name: string) => birdc(birdSocket(path.join(dir, 'bird')), config.binPath, ['show', 'route', 'table', name, 'all']);
  const routesUntil = (name: string, check: (text: string) => boolean, what: string) =>
    waitFor(async () => {
      const text = await table(name);
      return check(text) ? text : undefined;
    }, 20_000, what);
  const record = (id: string, mitigation: unknown, endsInMs: number): MitigationRecord => ({ id, org_id: 'org_a', mitigation, starts_at: Date.now() - 1_000, ends_at: Date.now() + endsInMs });

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mitigation-reconciler-'));
    const [bgpPort, apiPort, birdPort] = await Promise.all([freePort(), freePort(), freePort()]);
    gobgpd = localGobgpServer({ dir: path.join(dir, 'gobgpd'), bgpPort, apiPort, asn, routerId: '127.0.0.1', binPath: config.binPath, toolsDir: config.toolsDir }, log);
    supervisor = new EngineSupervisor(gobgpd, { checkIntervalMs: 100, backoffMs: 100, maxBackoffMs: 1_000, livenessFailAfterMs: 60_000 }, { log, registry });
    bird = localBird({ dir: path.join(dir, 'bird'), binPath: config.binPath, address: '127.0.0.2', port: birdPort, asn, speaker: { address: '127.0.0.1', port: bgpPort, asn }, discardNextHop }, log);
    await Promise.all([supervisor.start(), bird.start()]);
    nats = new NatsClient({ url: process.env.TEST_NATS_URL!, name: 'reconciler-test' }, log);
    await nats.start();
    ledger = new MitigationLedger({ nats, prefix, replicas: 1, signingKey: randomBytes(32).toString('base64url') });
    await ledger.start();
    speaker = new BgpSpeaker({ address: `127.0.0.1:${apiPort}`, protoDir: gobgpProtoDir(config.toolsDir) });
    await speaker.start();
    lease = await speakerLease({ nats, prefix, speakerAddress: `127.0.0.1:${apiPort}`, registry, log });
    const neighbour = { address: '127.0.0.2', asn, port: birdPort, localAddress: '127.0.0.1', connectRetrySeconds: 1, holdTimeSeconds: 9 };
    reconciler = new MitigationReconciler({ intervalMs: 200, neighbours: [neighbour], keepEndedMs: 2_000 }, { speaker, ledger, lease: lease.reconcilerLease, approvedPrefixes: (orgId) => Promise.resolve(approved.get(orgId) ?? []), registry, log });
    await reconciler.start();
    await waitFor(async () => ((await speaker.neighbours())[0]?.state === 'ESTABLISHED' ? true : undefined), 30_000, 'the BGP session with BIRD');
  }, 60_000);

  afterAll(async () => {
    await reconciler?.stop();
    await speaker?.stop();
    await nats?.jsm.streams.delete(`KV_${names(prefix).mitigationsBucket}`).catch(() => undefined);
    await lease?.remove();
    await nats?.stop();
    await Promise.all([supervisor?.stop(), bird?.stop()]);
    fs.rmSync(dir, { recursive: true, force: true });
  });

  test('a mitigation the ledger holds active reaches BIRD, and leaves it once its end has passed', async () => {
    await ledger.put(record('rtbh-1', blackhole, 4_000));
    await routesUntil('master4', (t) => t.includes('198.51.100.9/32'), 'the RTBH route in BIRD');
    await routesUntil('master4', (t) => !t.includes('198.51.100.9/32'), 'the RTBH route gone after its end');
    expect(await speaker.announced()).toEqual([]);
  });

  test('a withdrawal is final: the record written again (a late retry, an extension) stays withdrawn and out of BIRD', async () => {
    const late = record('late-1', blackhole, 600_000);
    await ledger.put(late);
    await routesUntil('master4', (t) => t.includes('198.51.100.9/32'), 'the RTBH route in BIRD');
    const withdrawnAt = Date.now();
    await ledger.withdraw('org_a', 'late-1', withdrawnAt);
    await ledger.put({ ...late, ends_at: late.ends_at + 600_000 });
    expect((await ledger.all()).records.find((r) => r.id === 'late-1')?.withdrawn_at).toBe(withdrawnAt);
    await routesUntil('master4', (t) => !t.includes('198.51.100.9/32'), 'the RTBH route gone');
  });

  test('a record ended longer ago than the ledger keeps ended ones is forgotten', async () => {
    await ledger.put({ ...record('old', blackhole, 0), starts_at: Date.now() - 60_000, ends_at: Date.now() - 3_000 });
    await waitFor(async () => ((await ledger.all()).records.some((r) => r.id === 'old') ? undefined : true), 10_000, 'the old record forgotten');
  });

  test('a mitigation withdrawn in the ledger before its end leaves BIRD', async () => {
    await ledger.put(record('discard-1', discard, 600_000));
    await routesUntil(birdFlowTable, (t) => t.includes('203.0.113.0/24'), 'the discard rule in BIRD');
    await ledger.withdraw('org_a', 'discard-1', Date.now());
    await routesUntil(birdFlowTable, (t) => !t.includes('203.0.113.0/24'), 'the discard rule gone after its withdrawal');
  });

  test('an IPv6 Flowspec rule on TCP flags reaches BIRD’s flow6 table once: what the speaker reads back equals the ledger, so later passes change nothing', async () => {
    const [announcedBefore, withdrawnBefore] = [await changes(registry, 'announced'), await changes(registry, 'withdrawn')];
    await ledger.put(record('syn-6', synFlood6, 600_000));
    const text = await routesUntil(birdFlowTable6, (t) => t.includes('2001:db8::9/128'), 'the IPv6 rule in BIRD');
    expect(text).toMatch(/flow6 \{ dst 2001:db8::9\/128; next header 6; tcp flags 0x2\/0x2; \}/);
    const passes = await metricTotal(registry, 'nettel_mitigation_reconciles_total');
    await waitFor(async () => ((await metricTotal(registry, 'nettel_mitigation_reconciles_total')) >= passes + 5 ? true : undefined), 20_000, 'five more passes');
    expect(await changes(registry, 'announced')).toBe(announcedBefore + 1);
    expect(await changes(registry, 'withdrawn')).toBe(withdrawnBefore);
    await ledger.withdraw('org_a', 'syn-6', Date.now());
    await routesUntil(birdFlowTable6, (t) => !t.includes('2001:db8::9/128'), 'the IPv6 rule gone after its withdrawal');
  });

  test('after a kill -9, gobgpd comes back empty and the reconciler gives it its neighbour and its routes again', async () => {
    await ledger.put(record('rtbh-2', blackhole, 600_000));
    await routesUntil('master4', (t) => t.includes('198.51.100.9/32'), 'the RTBH route in BIRD');
    gobgpd.kill();
    await routesUntil('master4', (t) => !t.includes('198.51.100.9/32'), 'BIRD to drop the route with the session');
    await routesUntil('master4', (t) => t.includes('198.51.100.9/32'), 'the RTBH route back in BIRD');
    expect(await metricTotal(registry, 'nettel_engine_restarts_total')).toBe(1);
    await ledger.withdraw('org_a', 'rtbh-2', Date.now());
    await routesUntil('master4', (t) => !t.includes('198.51.100.9/32'), 'the RTBH route gone');
  });

  test('a ledger entry that is not a signed mitigation the speaker can express is counted and never announced', async () => {
    const kv = await nats.js().views.kv(names(prefix).mitigationsBucket);
    await kv.put('org_a.garbage', '{"id":"garbage"');
    // Whoever can write the bucket but holds another key: a well-formed record, signed wrong.
    const forger = new MitigationLedger({ nats, prefix, replicas: 1, signingKey: randomBytes(32).toString('base64url') });
    await forger.start();
    await forger.put(record('forged', { action: 'blackhole', destination: '198.51.100.66/32', nextHop: discardNextHop }, 600_000));
    await kv.put('org_a.unsigned', JSON.stringify(record('unsigned', { action: 'blackhole', destination: '198.51.100.67/32', nextHop: discardNextHop }, 600_000)));
    await ledger.put(record('too-wide', { action: 'blackhole', destination: '10.0.0.0/8', nextHop: discardNextHop }, 600_000));
    await ledger.put(record('rtbh-3', blackhole, 600_000));
    await routesUntil('master4', (t) => t.includes('198.51.100.9/32'), 'the valid route in BIRD');
    const text = await table('master4');
    for (const refused of ['10.0.0.0/8', '198.51.100.66/32', '198.51.100.67/32']) expect(text).not.toContain(refused);
    expect(await metricTotal(registry, 'nettel_mitigation_ledger_unreadable_entries')).toBe(4);
    await ledger.withdraw('org_a', 'rtbh-3', Date.now());
  });

  test('an entry of before its withdrawal, written back by whoever can write the bucket, is refused, counted as a replay, and stays out of BIRD', async () => {
    const kv = await nats.js().views.kv(names(prefix).mitigationsBucket);
    const replayed = { action: 'blackhole', destination: '198.51.100.70/32', nextHop: discardNextHop };
    await ledger.put(record('replayed-1', replayed, 600_000));
    await routesUntil('master4', (t) => t.includes('198.51.100.70/32'), 'the RTBH route in BIRD');
    const signedBefore = (await kv.get('org_a.replayed-1'))!.string();
    await ledger.withdraw('org_a', 'replayed-1', Date.now());
    await routesUntil('master4', (t) => !t.includes('198.51.100.70/32'), 'the RTBH route withdrawn');
    await kv.put('org_a.replayed-1', signedBefore);
    const replays = async () => (await registry.getSingleMetric('nettel_mitigation_ledger_refused_entries_total')?.get())?.values.find((v) => v.labels.kind === 'replayed')?.value;
    await waitFor(async () => ((await replays()) === 1 ? true : undefined), 10_000, 'the replayed entry counted');
    // Several passes of the reconciler later, the route is still out.
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect(await table('master4')).not.toContain('198.51.100.70/32');
    expect((await ledger.all()).unreadable).toContainEqual({ key: 'org_a.replayed-1', reason: expect.stringMatching(/written again after a later write/) as unknown });
  });

  test('a mitigation whose prefix the platform admin revoked leaves BIRD at the next pass, withdrawn for good in the ledger', async () => {
    approved.set('org_rev', ['198.51.100.0/24']);
    await ledger.put({ ...record('rev-1', { action: 'blackhole', destination: '198.51.100.44/32', nextHop: discardNextHop }, 600_000), org_id: 'org_rev' });
    await routesUntil('master4', (t) => t.includes('198.51.100.44/32'), 'the RTBH route in BIRD');
    approved.set('org_rev', []);
    await routesUntil('master4', (t) => !t.includes('198.51.100.44/32'), 'the RTBH route gone after the revocation');
    expect((await ledger.all()).records.find((r) => r.id === 'rev-1')?.withdrawn_at).toEqual(expect.any(Number));
    expect(await metricTotal(registry, 'nettel_mitigation_unapproved_withdrawals_total')).toBe(1);
    // Approved again, the prefix does not bring the mitigation back: its withdrawal is final, as a person's is.
    approved.set('org_rev', ['198.51.100.0/24']);
    const passes = await metricTotal(registry, 'nettel_mitigation_reconciles_total');
    await waitFor(async () => ((await metricTotal(registry, 'nettel_mitigation_reconciles_total')) >= passes + 3 ? true : undefined), 20_000, 'three more passes');
    expect(await table('master4')).not.toContain('198.51.100.44/32');
  });
});
