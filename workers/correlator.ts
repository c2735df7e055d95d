import { correlate, correlationKey, defaultRules, type CorrelationRules, type Incident } from '../core/correlation';
import type { Metrics } from '../service/metrics';
import type { IncidentsRepo } from '../storage/incidents-repo';
import type { KeyOfSignal, TelemetryStore } from '../storage/telemetry-store';

/** A correlation key whose signals changed, and the event time of its earliest new signal. */
export interface KeyChange extends KeyOfSignal {
  since: number;
}

/**
 * Recomputes the incidents of correlation keys from what ClickHouse holds,
 * through the pure engine. State lives in ClickHouse, not in a worker, so
 * several workers may touch one key: the worker whose insert finished last
 * reads every signal, and versions grow with the signal count, so its
 * computation is the one that wins.
 *
 * Only the part of a key's history a change can reach is read again: from
 * the first signal of the earliest incident that the earliest new signal
 * could join (one within the correlation window), or from that signal when
 * none could. Incidents before that point opened and closed on their own, so
 * the engine run from there gives what a run over all history would.
 */
export class Correlator {
  constructor(
    private readonly deps: {
      store: TelemetryStore;
      incidents: IncidentsRepo;
      metrics: Metrics;
      rules?: CorrelationRules;
      now?: () => number;
    },
  ) {}

  async recompute(orgId: string, changes: KeyChange[]): Promise<Incident[]> {
    if (changes.length === 0) return [];
    const rules = this.deps.rules ?? defaultRules;
    const earliest = changes.reduce((m, c) => Math.min(m, c.since), Number.MAX_SAFE_INTEGER);
    const storedAll = await this.deps.incidents.ofKeys(orgId, changes, earliest - rules.windowMs);
    const stored = storedAll.filter((i) => !i.superseded);
    const anchors = new Map<string, number>();
    for (const change of changes) {
      const key = correlationKey({ org_id: orgId, ...change });
      const reachable = stored.filter((i) => correlationKey(i) === key && i.last_seen >= change.since - rules.windowMs);
      anchors.set(key, reachable.reduce((m, i) => Math.min(m, i.first_seen), change.since));
    }
    const inRange = stored.filter((i) => i.first_seen >= anchors.get(correlationKey(i))!);
    const [signals, transitions] = await Promise.all([
      this.deps.store.signalsOfKeys(orgId, changes.map((c) => ({ ...c, since: anchors.get(correlationKey({ org_id: orgId, ...c }))! }))),
      this.deps.incidents.transitionsOfKeys(orgId, changes),
    ]);
    const computed = correlate(signals, transitions, rules);
    const storedById = new Map(storedAll.map((i) => [i.id, i]));
    const computedIds = new Set(computed.map((i) => i.id));
    const writes: Array<{ incident: Incident; superseded: boolean }> = [];
    for (const incident of computed) {
      const before = storedById.get(incident.id);
      if (!before || incident.version > before.version) writes.push({ incident, superseded: false });
      // Back from a tombstone (signals arrived in an order that briefly moved its start): outrank the tombstone.
      else if (before.superseded) writes.push({ incident: { ...incident, version: before.version + 1 }, superseded: false });
    }
    // An incident whose first signal is no longer first (a late, earlier signal arrived) lives on under a new id.
    for (const before of inRange) {
      if (!computedIds.has(before.id)) writes.push({ incident: { ...before, version: before.version + 1 }, superseded: true });
    }
    await this.deps.incidents.write(writes, (this.deps.now ?? Date.now)());
    this.deps.metrics.incidentsWritten.inc(writes.length);
    return computed;
  }
}
