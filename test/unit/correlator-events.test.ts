import { Registry } from 'prom-client';
import { Correlator } from '../../application/correlator';
import type { Incident } from '../../core/correlation';
import { rateSignal } from '../../core/detection/signals';
import type { SignalRow } from '../../core/telemetry';
import type { CloudEvent } from '../../core/webhook-events';
import type { IncidentsRepo, StoredIncident } from '../../storage/incidents-repo';
import { t0 } from '../support/detection-flows';

const target = '203.0.113.9';
const windowSignal = (second: number): SignalRow =>
  rateSignal('org1', { detector_version: 2, scope: 'host', target, window_end: t0 + second * 1_000, rule: 'rate.v2:host' }, t0 + second * 1_000);

/** The correlator over plain objects standing for ClickHouse and the outbox: the signals it reads, the incidents it writes, its reads of attack windows counted. */
function correlatorOver(signals: SignalRow[]) {
  let stored: StoredIncident[] = [];
  const attackReads: string[] = [];
  const published: CloudEvent[] = [];
  const correlator = new Correlator({
    signals: { runsOfKeys: (_org: string, keys: readonly unknown[]) => Promise.resolve(keys.map((_, i) => ({ start: 0, signals: i === 0 ? [...signals] : [] }))) },
    incidents: {
      transitionsOfKeys: () => Promise.resolve([]),
      ofKeys: () => Promise.resolve(stored),
      write: (rows: Array<{ incident: Incident; superseded: boolean }>, at: number) => {
        stored = rows.map((r) => ({ ...r.incident, superseded: r.superseded, updated_at: at }));
        return Promise.resolve();
      },
    } as unknown as IncidentsRepo,
    attacks: { ofTarget: (_org: string, service: string) => (attackReads.push(service), Promise.resolve([])) },
    events: { publish: (events: CloudEvent[]) => (published.push(...events), Promise.resolve()) },
    registry: new Registry(),
    now: () => t0 + 60_000,
  });
  const recompute = (since: number) => correlator.recompute('org1', [{ service: target, environment: 'network', region: 'global', since }]);
  return { recompute, signals, attackReads, published };
}

describe("the correlator's incident events", () => {
  test("a rate incident's write that notifies nobody reads none of its attack windows; the write that opens it reads them", async () => {
    const first = windowSignal(1);
    const c = correlatorOver([first]);
    await c.recompute(first.ts);
    expect([c.published.map((e) => e.type), c.attackReads]).toEqual([['incident.opened'], [target]]);
    // The next window's signal joins the incident: a new version, no event, so no read.
    const next = windowSignal(2);
    c.signals.push(next);
    await c.recompute(next.ts);
    expect([c.published.map((e) => e.type), c.attackReads]).toEqual([['incident.opened'], [target]]);
  });
});
