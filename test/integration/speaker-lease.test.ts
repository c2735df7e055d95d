import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { gobgpProtoDir, localGobgpServer } from '../../engines/gobgp';
import { freePort, type LocalProcess } from '../../engines/local-process';
import { createLogger } from '../../observability/logger';
import { createRegistry, type Registry } from '../../observability/metrics';
import { loadConfig } from '../../service/config';
import { MitigationLedger, type MitigationRecord } from '../../streams/mitigation-ledger';
import { NatsClient } from '../../streams/nats-client';
import type { Lease } from '../../streams/lease';
import { names } from '../../streams/names';
import { BgpSpeaker } from '../../workers/mitigation/bgp-speaker';
import { MitigationReconciler } from '../../workers/mitigation/mitigation-reconciler';
import { defaultLeaseTtlMs, reconcileIntervalMs } from '../../workers/mitigation/mitigation-reconciler.config';
import type { LeaseHold } from '../../workers/mitigation/reconciler-lease';
import { ReconcilerLease } from '../../workers/mitigation/reconciler-lease';
import type { Mitigation } from '../../core/mitigation';
import { metricTotal } from '../support/metrics';
import { speakerLease } from '../support/speaker-lease';
import { waitFor } from '../support/wait';

/**
 * Two temporal-worker processes, as two reconcilers of their own (each its
 * NATS connection, ledger, lease, speaker client and metrics) on one ledger
 * (a JetStream bucket on the tests' nats-server) and one real gobgpd, at the
 * product's interval and lease time to live: the speaker is told each
 * change once, and a holder killed without letting go of the lease is
 * followed by the other within the time to live and a pass.
 */
const log = createLogger(process.env.TEST_LOGS ? 'info' : 'silent');
const config = loadConfig(process.env);
const signingKey = randomBytes(32).toString('base64url');
const prefix = `t${randomBytes(5).toString('hex')}`;

/** The real speaker client, each call that changes the speaker written down with its time. */
class CountingSpeaker extends BgpSpeaker {
  readonly calls: Array<{ call: 'announce' | 'withdraw'; destination: string; at: number }> = [];
  override async announce(m: Mitigation): Promise<void> {
    this.calls.push({ call: 'announce', destination: m.action === 'blackhole' ? m.destination : '', at: Date.now() });
    await super.announce(m);
  }
  override async withdraw(m: Mitigation): Promise<void> {
    this.calls.push({ call: 'withdraw', destination: m.action === 'blackhole' ? m.destination : '', at: Date.now() });
    await super.withdraw(m);
  }
}

/** A process to be killed -9: from kill() on, its lease is neither renewed nor released (NATS no longer hears it). */
class Killable implements LeaseHold {
  killedAt?: number;
  /** When its last renewal that held was sent: the lease stands until that plus its time to live. */
  lastRenewalAt = 0;
  constructor(private readonly lease: Lease) {}
  hold = async () => {
    if (this.killedAt) throw new Error('killed');
    const sentAt = Date.now();
    const held = await this.lease.hold();
    if (held) this.lastRenewalAt = sentAt;
    return held;
  };
  release = () => (this.killedAt ? Promise.resolve() : this.lease.release());
  holder = () => this.lease.holder();
  retryAt = () => this.lease.retryAt();
  kill = () => (this.killedAt = Date.now());
}

interface WorkerProcess {
  name: string;
  nats: NatsClient;
  ledger: MitigationLedger;
  speaker: CountingSpeaker;
  registry: Registry;
  killable: Killable;
  reconciler: MitigationReconciler;
  removeLease: () => Promise<unknown>;
}

let dir: string;
let gobgpd: LocalProcess;
let speakerAddress: string;
const workers: WorkerProcess[] = [];

async function workerProcess(name: string): Promise<WorkerProcess> {
  const nats = new NatsClient({ url: process.env.TEST_NATS_URL!, name }, log);
  await nats.start();
  const ledger = new MitigationLedger({ nats, prefix, replicas: 1, signingKey });
  await ledger.start();
  const speaker = new CountingSpeaker({ address: speakerAddress, protoDir: gobgpProtoDir(config.toolsDir) });
  await speaker.start();
  const registry = createRegistry();
  const { lease, remove } = await speakerLease({ nats, prefix, speakerAddress, registry, log });
  const killable = new Killable(lease);
  const reconciler = new MitigationReconciler(
    { intervalMs: reconcileIntervalMs, neighbours: [], keepEndedMs: 60_000 },
    { speaker, ledger, lease: new ReconcilerLease(killable, { registry, log }), approvedPrefixes: () => Promise.resolve(['198.51.100.0/24']), registry, log },
  );
  return { name, nats, ledger, speaker, registry, killable, reconciler, removeLease: remove };
}

const record = (id: string, destination: string, endsInMs: number): MitigationRecord => ({
  id, org_id: 'org_a', mitigation: { action: 'blackhole', destination, nextHop: '192.0.2.1' }, starts_at: Date.now() - 1_000, ends_at: Date.now() + endsInMs,
});
/** Every worker's calls to the speaker for a destination, in the order they were made (whichever worker holds the lease). */
const callsFor = (destination: string) =>
  workers
    .flatMap((w) => w.speaker.calls.filter((c) => c.destination === destination).map((c) => ({ ...c, by: w.name })))
    .sort((a, b) => a.at - b.at);
const changesCounted = async (change: string) => {
  let sum = 0;
  for (const w of workers) sum += ((await w.registry.getSingleMetric('nettel_mitigation_reconcile_changes_total')?.get())?.values ?? []).filter((v) => v.labels.change === change).reduce((s, v) => s + v.value, 0);
  return sum;
};
const holders = async () => (await Promise.all(workers.map((w) => metricTotal(w.registry, 'nettel_mitigation_lease_held')))).reduce((a, b) => a + b, 0);
const speakerHolds = async (destination: string) => (await workers[0]!.speaker.announced()).some((m) => m.action === 'blackhole' && m.destination === destination);

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'speaker-lease-'));
  const [bgpPort, apiPort] = await Promise.all([freePort(), freePort()]);
  gobgpd = localGobgpServer({ dir: path.join(dir, 'gobgpd'), bgpPort, apiPort, asn: 65001, routerId: '127.0.0.1', binPath: config.binPath, toolsDir: config.toolsDir }, log);
  await gobgpd.start();
  speakerAddress = `127.0.0.1:${apiPort}`;
  workers.push(await workerProcess('temporal-worker-1'), await workerProcess('temporal-worker-2'));
  await Promise.all(workers.map((w) => w.reconciler.start()));
  await waitFor(async () => ((await holders()) === 1 ? true : undefined), 10_000, 'one holder of the lease');
}, 60_000);

afterAll(async () => {
  for (const w of workers) {
    await w.reconciler.stop();
    await w.speaker.stop();
  }
  await workers[0]?.nats.jsm.streams.delete(`KV_${names(prefix).mitigationsBucket}`).catch(() => undefined);
  await workers[0]?.removeLease();
  for (const w of workers) await w.nats.stop();
  await gobgpd?.stop();
  fs.rmSync(dir, { recursive: true, force: true });
});

test('two reconcilers on one ledger and one speaker, both asked at once after the write, tell the speaker once to announce and once to withdraw at the end', async () => {
  const destination = '198.51.100.21/32';
  await workers[0]!.ledger.put(record('once-1', destination, 3_000));
  // As the automation activities ask their own process's reconciler once they wrote: here both at once.
  await Promise.all(workers.map((w) => w.reconciler.reconcileNow()));
  await waitFor(async () => ((await speakerHolds(destination)) ? true : undefined), 10_000, 'the route announced');
  await waitFor(async () => ((await speakerHolds(destination)) ? undefined : true), 15_000, 'the route withdrawn at its end');
  // Three more passes of each: a late second call would show.
  await new Promise((resolve) => setTimeout(resolve, 3 * reconcileIntervalMs));
  const calls = callsFor(destination);
  process.stdout.write(`speaker lease, both alive: ${JSON.stringify(calls.map((c) => `${c.by} ${c.call}`))}\n`);
  expect(calls.map((c) => c.call)).toEqual(['announce', 'withdraw']);
  expect({ announced: await changesCounted('announced'), withdrawn: await changesCounted('withdrawn'), holders: await holders() }).toEqual({ announced: 1, withdrawn: 1, holders: 1 });
}, 30_000);

test('a holder killed without letting go of the lease changes the speaker no more, and the other withdraws a route due meanwhile within the time to live and a pass of its last renewal', async () => {
  const destination = '198.51.100.22/32';
  await workers[0]!.ledger.put(record('kill-1', destination, 600_000));
  await waitFor(async () => ((await speakerHolds(destination)) ? true : undefined), 10_000, 'the route announced');
  const holder = workers.find((w) => w.speaker.calls.some((c) => c.destination === destination))!;
  const other = workers.find((w) => w !== holder)!;
  const killedAt = holder.killable.kill();
  await other.ledger.withdraw('org_a', 'kill-1', Date.now());
  await waitFor(async () => ((await speakerHolds(destination)) ? undefined : true), defaultLeaseTtlMs + 5 * reconcileIntervalMs, 'the other to withdraw the route');
  const calls = callsFor(destination);
  const withdrawnAt = calls.find((c) => c.call === 'withdraw')?.at ?? Number.NaN;
  const lag = withdrawnAt - holder.killable.lastRenewalAt;
  process.stdout.write(
    `speaker lease, holder ${holder.name} killed: the route withdrawn ${lag} ms after its last renewal, ${withdrawnAt - killedAt} ms after the kill ` +
      `(TTL ${defaultLeaseTtlMs} ms, interval ${reconcileIntervalMs} ms); ${JSON.stringify(calls.map((c) => `${c.by} ${c.call} +${c.at - killedAt} ms`))}\n`,
  );
  expect(calls.map((c) => `${c.by} ${c.call}`)).toEqual([`${holder.name} announce`, `${other.name} withdraw`]);
  expect(lag).toBeLessThanOrEqual(defaultLeaseTtlMs + reconcileIntervalMs);
}, 30_000);
