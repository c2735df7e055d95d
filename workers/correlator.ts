import { correlate, defaultRules, type CorrelationRules, type Incident } from '../core/correlation';
import type { Metrics } from '../service/metrics';
import type { IncidentsRepo } from '../storage/incidents-repo';
import type { KeyOfSignal, TelemetryStore } from '../storage/telemetry-store';

/**
 * Recomputes the incidents of correlation keys from what ClickHouse holds:
 * every stored signal of the key and the transitions of its incidents, run
 * through the pure engine. State lives in ClickHouse, not in a worker, so
 * several workers may touch one key: the worker whose insert finished last
 * reads every signal, and versions grow with the signal count, so its
 * computation is the one that wins.
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

  async recompute(orgId: string, keys: KeyOfSignal[]): Promise<Incident[]> {
    if (keys.length === 0) return [];
    const [signals, stored] = await Promise.all([
      this.deps.store.signalsOfKeys(orgId, keys),
      this.deps.incidents.ofKeys(orgId, keys),
    ]);
    const transitions = await this.deps.incidents.transitionsOf(
      orgId,
      stored.map((i) => i.id),
    );
    const computed = correlate(signals, transitions, this.deps.rules ?? defaultRules);
    const storedById = new Map(stored.map((i) => [i.id, i]));
    const computedIds = new Set(computed.map((i) => i.id));
    const changes: Array<{ incident: Incident; superseded: boolean }> = [];
    for (const incident of computed) {
      const before = storedById.get(incident.id);
      if (!before || incident.version > before.version) changes.push({ incident, superseded: false });
      else if (before.superseded) changes.push({ incident: { ...incident, version: before.version + 1 }, superseded: false });
    }
    // An incident whose first signal is no longer first (a late, earlier signal arrived) lives on under a new id.
    for (const before of stored) {
      if (!computedIds.has(before.id) && !before.superseded) {
        changes.push({ incident: { ...before, version: before.version + 1 }, superseded: true });
      }
    }
    await this.deps.incidents.write(changes, (this.deps.now ?? Date.now)());
    this.deps.metrics.incidentsWritten.inc(changes.length);
    return computed;
  }
}
