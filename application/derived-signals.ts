import { correlationKey } from '../core/correlation';
import type { SignalRow } from '../core/telemetry';
import type { StoredIds } from '../storage/telemetry-store';
import type { KeyChange } from './correlator';

/**
 * How signals the detectors derive are stored and correlated, for every
 * detector: the stream workers' (metric thresholds, traffic volume) and the
 * rate detectors' consumer. A derived signal's id comes from its inputs, so
 * deriving it again (a redelivery, a second worker) stores it once.
 */
export interface DerivedSignalWrites {
  existingEventIds(table: 'signals', orgId: string, minTs: number, maxTs: number, ids: string[]): Promise<StoredIds>;
  /** One insert of NDJSON signal rows (the caller times and counts it). */
  insertSignals(ndjson: string, rows: number): Promise<void>;
}

/**
 * Stores the signals not stored yet and returns those to correlate: the
 * fresh ones, or on a retry all of them (the attempt that stored them may
 * have failed before correlating).
 */
export async function storeDerivedSignals(store: DerivedSignalWrites, signals: SignalRow[], retry: boolean): Promise<SignalRow[]> {
  const fresh: SignalRow[] = [];
  const all: SignalRow[] = [];
  for (const [org, group] of groupBy(signals, (s) => s.org_id)) {
    const minTs = group.reduce((m, s) => Math.min(m, s.ts), Number.MAX_SAFE_INTEGER);
    const maxTs = group.reduce((m, s) => Math.max(m, s.ts), 0);
    const existing = await store.existingEventIds('signals', org, minTs, maxTs, group.map((s) => s.event_id));
    const seen = new Set<string>();
    for (const s of group) {
      if (seen.has(s.event_id)) continue;
      seen.add(s.event_id);
      all.push(s);
      if (!existing.has(s.event_id)) fresh.push(s);
    }
  }
  if (fresh.length) await store.insertSignals(fresh.map((s) => JSON.stringify(s)).join('\n') + '\n', fresh.length);
  return retry ? all : fresh;
}

/** Recomputes the incidents of the correlation keys the signals touch, once per workspace, from each key's earliest new signal. */
export async function correlateSignals(correlator: { recompute(orgId: string, changes: KeyChange[]): Promise<unknown> }, signals: SignalRow[]): Promise<void> {
  for (const [org, group] of groupBy(signals, (s) => s.org_id)) {
    const changes = new Map<string, KeyChange>();
    for (const s of group) {
      const key = correlationKey(s);
      const known = changes.get(key);
      if (known) known.since = Math.min(known.since, s.ts);
      else changes.set(key, { service: s.service, environment: s.environment, region: s.region, since: s.ts });
    }
    await correlator.recompute(org, [...changes.values()]);
  }
}

export function groupBy<T>(items: T[], keyOf: (item: T) => string): Map<string, T[]> {
  const out = new Map<string, T[]>();
  for (const item of items) {
    const key = keyOf(item);
    const list = out.get(key);
    if (list) list.push(item);
    else out.set(key, [item]);
  }
  return out;
}
