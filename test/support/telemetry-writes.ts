import { requestPrefixOf } from '../../core/ids';
import type { StoredPrefix, TelemetryTable } from '../../storage/telemetry-store';
import type { TelemetryWrites } from '../../workers/telemetry/stream-worker-ports';

/**
 * The stream worker's store as a plain object holding these event ids (of
 * every table and workspace): it answers the lookups as ClickHouse would, and
 * keeps every insert and every lookup for the test to count.
 */
export function storeHolding(stored: readonly string[]) {
  const inserts: Array<{ table: TelemetryTable; rows: Array<{ event_id: string }> }> = [];
  const lookups: string[][] = [];
  const prefixQueries: Array<{ table: TelemetryTable; org: string; ranges: Array<readonly [number, number]>; prefixes: string[] }> = [];
  const held = new Set(stored);
  const store: TelemetryWrites = {
    insert: (table, ndjson) => {
      const rows = String(ndjson).split('\n').filter(Boolean).map((l) => JSON.parse(l) as { event_id: string });
      inserts.push({ table, rows });
      return Promise.resolve();
    },
    existingEventIds: (_table, _org, _min, _max, ids) => {
      lookups.push(ids);
      return Promise.resolve(new Map(ids.filter((id) => held.has(id)).map((id) => [id, '0'])));
    },
    storedPrefixes: (table, org, ranges, prefixes) => {
      prefixQueries.push({ table, org, ranges: [...ranges], prefixes });
      const asked = new Set(prefixes);
      const out = new Map<string, StoredPrefix>();
      for (const id of held) {
        const p = requestPrefixOf(id);
        if (p === undefined || !asked.has(p)) continue;
        const known = out.get(p);
        out.set(p, known ? { ids: known.ids + 1, lo: id < known.lo ? id : known.lo, hi: id > known.hi ? id : known.hi, writes: [] } : { ids: 1, lo: id, hi: id, writes: [] });
      }
      return Promise.resolve(out);
    },
    completeRollups: () => Promise.resolve([]),
    destinationMinutesOver: () => Promise.resolve([]),
    exporterDestinationMinutesOver: () => Promise.resolve([]),
  };
  return { store, inserts, lookups, prefixQueries };
}
