import { createLogger } from '../../observability/logger';
import { createRegistry } from '../../observability/metrics';
import type { MitigationLedger, MitigationRecord } from '../../streams/mitigation-ledger';
import type { BgpSpeaker } from '../../workers/mitigation/bgp-speaker';
import { MitigationReconciler } from '../../workers/mitigation/mitigation-reconciler';
import { ReconcilerLease, speakerLeaseKey, type LeaseHold } from '../../workers/mitigation/reconciler-lease';
import type { Mitigation } from '../../core/mitigation';
import { metricTotal } from '../support/metrics';

/** A speaker that records every call that changes it. */
class RecordingSpeaker {
  connected = true;
  readonly changes: string[] = [];
  start = () => Promise.resolve();
  neighbours = () => Promise.resolve([]);
  addNeighbour = () => Promise.resolve();
  keepOwnRoutesOnly = () => Promise.resolve(false);
  announced = () => Promise.resolve([]);
  announce = (m: Mitigation) => (this.changes.push(`announce ${m.action === 'blackhole' ? m.destination : ''}`), Promise.resolve());
  withdraw = () => Promise.resolve();
}

/** The lease as JetStream would answer it, one answer per hold(): held, another's, or NATS not answering. */
function scriptedLease(answers: Array<boolean | 'down'>): LeaseHold & { holds: number } {
  const lease = {
    holds: 0,
    hold: () => {
      const answer = answers[Math.min(lease.holds++, answers.length - 1)];
      return answer === 'down' ? Promise.reject(new Error('nats: timeout')) : Promise.resolve(answer!);
    },
    release: () => Promise.resolve(),
    holder: () => Promise.resolve('other-host/42/abcd'),
  };
  return lease;
}

const blackhole = (destination: string): Mitigation => ({ action: 'blackhole', destination, nextHop: '192.0.2.1' });
const record = (id: string, m: Mitigation): MitigationRecord => ({ id, org_id: 'org_a', mitigation: m, starts_at: 0, ends_at: Number.MAX_SAFE_INTEGER });

function reconcilerWith(lease: LeaseHold) {
  const speaker = new RecordingSpeaker();
  const registry = createRegistry();
  const ledger = { all: () => Promise.resolve({ records: [record('a', blackhole('198.51.100.1/32')), record('b', blackhole('198.51.100.2/32'))], unreadable: [] }) };
  const log = createLogger('silent');
  const reconciler = new MitigationReconciler(
    { intervalMs: 60_000, neighbours: [], keepEndedMs: 60_000 },
    {
      speaker: speaker as unknown as BgpSpeaker,
      ledger: ledger as unknown as MitigationLedger,
      lease: new ReconcilerLease(lease, { registry, log }),
      approvedPrefixes: () => Promise.resolve(['198.51.100.0/24']),
      registry,
      log,
    },
  );
  return { speaker, registry, reconciler };
}

const leaseChanges = async (registry: ReturnType<typeof createRegistry>, change: string) =>
  ((await registry.getSingleMetric('nettel_mitigation_lease_changes_total')?.get())?.values ?? []).filter((v) => v.labels.change === change).reduce((sum, v) => sum + v.value, 0);

test('a process that does not hold the lease changes nothing on the speaker, and its probe names the holder', async () => {
  const { speaker, reconciler } = reconcilerWith(scriptedLease([false]));
  await reconciler.reconcileNow();
  expect(speaker.changes).toEqual([]);
  await expect(reconciler.probe()).resolves.toEqual({ detail: 'standing by: other-host/42/abcd reconciles the speaker' });
});

test('a lease lost between two changes stops the pass before the second: one announcement, the loss counted, the pass not a failure', async () => {
  // The pass's own renewal, the first announcement's, then another process's key.
  const { speaker, registry, reconciler } = reconcilerWith(scriptedLease([true, true, false]));
  await reconciler.reconcileNow();
  expect(speaker.changes).toEqual(['announce 198.51.100.1/32']);
  expect({ taken: await leaseChanges(registry, 'taken'), lost: await leaseChanges(registry, 'lost') }).toEqual({ taken: 1, lost: 1 });
  expect(await metricTotal(registry, 'nettel_mitigation_reconcile_failures_total')).toBe(0);
  expect(await metricTotal(registry, 'nettel_mitigation_lease_held')).toBe(0);
});

test('a lease that cannot be renewed (NATS not answering) stops the pass before its next change, counted as a failed renewal and a failed pass', async () => {
  const { speaker, registry, reconciler } = reconcilerWith(scriptedLease([true, true, 'down']));
  await reconciler.reconcileNow();
  expect(speaker.changes).toEqual(['announce 198.51.100.1/32']);
  expect(await metricTotal(registry, 'nettel_mitigation_lease_failures_total')).toBe(1);
  expect(await leaseChanges(registry, 'lost')).toBe(1);
  expect(await metricTotal(registry, 'nettel_mitigation_reconcile_failures_total')).toBe(1);
});

test('a speaker on loopback is leased per host, another by its address alone, in JetStream key characters', () => {
  expect(speakerLeaseKey('127.0.0.1:15051', 'host-a')).toBe('speaker.host-a_127_0_0_1_15051');
  expect(speakerLeaseKey('[::1]:15051', 'host-a')).toBe('speaker.host-a____1__15051');
  expect(speakerLeaseKey('gobgp.internal:50051', 'host-a')).toBe('speaker.gobgp_internal_50051');
});
