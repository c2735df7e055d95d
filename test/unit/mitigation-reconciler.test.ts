import { createLogger } from '../../observability/logger';
import { createRegistry } from '../../observability/metrics';
import type { MitigationLedger, MitigationRecord } from '../../streams/mitigation-ledger';
import type { BgpSpeaker } from '../../workers/mitigation/bgp-speaker';
import { MitigationReconciler } from '../../workers/mitigation/mitigation-reconciler';
import { ReconcilerLease } from '../../workers/mitigation/reconciler-lease';
import type { Mitigation } from '../../core/mitigation';
import { metricTotal } from '../support/metrics';

/** A speaker as the reconciler sees it: what it announces, and one destination it refuses. */
class FakeSpeaker {
  connected = true;
  announcedNow: Mitigation[] = [];
  constructor(private readonly refuses: string) {}
  start = () => Promise.resolve();
  neighbours = () => Promise.resolve([]);
  addNeighbour = () => Promise.resolve();
  keepOwnRoutesOnly = () => Promise.resolve(false);
  announced = () => Promise.resolve([...this.announcedNow]);
  announce = (m: Mitigation) => {
    if (m.action === 'blackhole' && m.destination === this.refuses) return Promise.reject(new Error('refused'));
    this.announcedNow.push(m);
    return Promise.resolve();
  };
  withdraw = () => Promise.resolve();
}

/** The only process: it always holds the speaker's lease. */
const soleHolder = (registry: ReturnType<typeof createRegistry>) =>
  new ReconcilerLease({ hold: () => Promise.resolve(true), release: () => Promise.resolve(), holder: () => Promise.resolve('this process') }, { registry, log: createLogger('silent') });

const blackhole = (destination: string): Mitigation => ({ action: 'blackhole', destination, nextHop: '192.0.2.1' });
const record = (id: string, m: Mitigation): MitigationRecord => ({ id, org_id: 'org_a', mitigation: m, starts_at: 0, ends_at: Number.MAX_SAFE_INTEGER });

test('a change the speaker refuses is counted, the pass fails, and the other changes of the pass are still made', async () => {
  const speaker = new FakeSpeaker('198.51.100.1/32');
  const ledger = { all: () => Promise.resolve({ records: [record('a', blackhole('198.51.100.1/32')), record('b', blackhole('198.51.100.2/32'))], unreadable: [] }) };
  const registry = createRegistry();
  const reconciler = new MitigationReconciler(
    { intervalMs: 60_000, neighbours: [], keepEndedMs: 60_000 },
    {
      speaker: speaker as unknown as BgpSpeaker,
      ledger: ledger as unknown as MitigationLedger,
      lease: soleHolder(registry),
      approvedPrefixes: () => Promise.resolve(['198.51.100.0/24']),
      registry,
      log: createLogger('silent'),
    },
  );
  await reconciler.reconcileNow();
  expect(speaker.announcedNow).toEqual([blackhole('198.51.100.2/32')]);
  expect(await metricTotal(registry, 'nettel_mitigation_reconcile_change_failures_total')).toBe(1);
  expect(await metricTotal(registry, 'nettel_mitigation_reconcile_failures_total')).toBe(1);
  await expect(reconciler.probe()).rejects.toThrow(/announced: refused/);
});

test('a workspace whose approved prefixes cannot be read keeps its routes for the pass, and the pass fails naming it', async () => {
  const speaker = new FakeSpeaker('none');
  const ledger = { all: () => Promise.resolve({ records: [record('a', blackhole('198.51.100.1/32'))], unreadable: [] }), withdraw: () => Promise.reject(new Error('not expected')) };
  const registry = createRegistry();
  const reconciler = new MitigationReconciler(
    { intervalMs: 60_000, neighbours: [], keepEndedMs: 60_000 },
    {
      speaker: speaker as unknown as BgpSpeaker,
      ledger: ledger as unknown as MitigationLedger,
      lease: soleHolder(registry),
      approvedPrefixes: () => Promise.reject(new Error('clickhouse is down')),
      registry,
      log: createLogger('silent'),
    },
  );
  await reconciler.reconcileNow();
  expect(speaker.announcedNow).toEqual([blackhole('198.51.100.1/32')]);
  await expect(reconciler.probe()).rejects.toThrow(/approved prefixes of org_a: clickhouse is down/);
});
