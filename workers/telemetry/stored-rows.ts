import { requestPrefixLength, requestPrefixOf } from '../../core/ids';
import type { StoredPrefix, TelemetryTable } from '../../storage/telemetry-store';
import type { TelemetryWrites } from './stream-worker-ports';

/** The rows of one message that may be stored already: its workspace, the times a stored copy may have, its event ids. */
export interface RowCheck {
  org: string;
  fromTs: number;
  toTs: number;
  ids: string[];
}

/** What a batch's check found: the ids ClickHouse holds, the writes that stored them (flows), and how many distinct ids were settled by request and by id. */
export interface StoredRows {
  stored: Set<string>;
  writes: Set<string>;
  byRequest: number;
  byId: number;
}

/** Checked ids of one request prefix (or of no prefix), and the times their messages span. */
interface IdGroup {
  ids: Set<string>;
  fromTs: number;
  toTs: number;
}

/**
 * Which checked event ids a table holds already, for a whole batch: per
 * workspace, one query tells what the table holds of each request prefix
 * (see `recordEventId` in core/ids.ts) over the messages' time ranges. A
 * request held whole drops its rows, one held not at all keeps them; one held
 * in part (an insert cut between partitions), or whose stored rows cannot be
 * told from the checked ones, is looked up id by id, as are ids of any other
 * form. The per-id lookups of a workspace share their queries too.
 */
export async function storedRows(
  store: Pick<TelemetryWrites, 'existingEventIds' | 'storedPrefixes'>,
  table: TelemetryTable,
  checks: RowCheck[],
): Promise<StoredRows> {
  const out: StoredRows = { stored: new Set(), writes: new Set(), byRequest: 0, byId: 0 };
  for (const [org, group] of groupByOrg(checks)) {
    const { byPrefix, others } = idGroups(group);
    const perId: IdGroup = { ids: new Set(others.ids), fromTs: others.fromTs, toTs: others.toTs };
    if (byPrefix.size > 0) {
      const held = await store.storedPrefixes(table, org, mergedRanges(group), [...byPrefix.keys()]);
      for (const [prefix, ids] of byPrefix) {
        const verdict = prefixVerdict([...ids.ids].sort(), held.get(prefix));
        if (verdict !== 'none') for (const w of held.get(prefix)!.writes) if (w !== '0') out.writes.add(w);
        if (verdict === 'some') {
          for (const id of ids.ids) perId.ids.add(id);
          perId.fromTs = Math.min(perId.fromTs, ids.fromTs);
          perId.toTs = Math.max(perId.toTs, ids.toTs);
          continue;
        }
        out.byRequest += ids.ids.size;
        if (verdict === 'all') for (const id of ids.ids) out.stored.add(id);
      }
    }
    if (perId.ids.size > 0) {
      out.byId += perId.ids.size;
      for (const [id, w] of await store.existingEventIds(table, org, perId.fromTs, perId.toTs, [...perId.ids])) {
        out.stored.add(id);
        if (w !== '0') out.writes.add(w);
      }
    }
  }
  return out;
}

/**
 * Whether a table holds all, none or some of a request's checked ids
 * (distinct, in order), from what it holds of the request's prefix. `all`
 * needs the checked ids to be a run of indexes and the stored ones to be as
 * many, none outside the run: a request published in several messages (see
 * streams/telemetry-publisher's chunks) may have other runs stored, so a
 * count alone would take an unstored run for a stored one. `some` also
 * stands for "cannot tell": those ids are looked up one by one.
 */
export function prefixVerdict(ids: readonly string[], held: Pick<StoredPrefix, 'ids' | 'lo' | 'hi'> | undefined): 'all' | 'none' | 'some' {
  const lo = ids[0];
  const hi = ids[ids.length - 1];
  if (lo === undefined || hi === undefined || !held || held.ids === 0 || held.hi < lo || held.lo > hi) return 'none';
  const run = indexOf(hi) - indexOf(lo) + 1 === ids.length;
  return run && held.lo >= lo && held.hi <= hi && held.ids === ids.length ? 'all' : 'some';
}

/** The time ranges of the checks, overlapping ones merged, in order. */
export function mergedRanges(checks: readonly RowCheck[]): Array<[number, number]> {
  const sorted = checks.map((c): [number, number] => [c.fromTs, c.toTs]).sort((a, b) => a[0] - b[0]);
  const out: Array<[number, number]> = [];
  for (const [from, to] of sorted) {
    const last = out[out.length - 1];
    if (last && from <= last[1] + 1) last[1] = Math.max(last[1], to);
    else out.push([from, to]);
  }
  return out;
}

const indexOf = (id: string) => parseInt(id.slice(requestPrefixLength), 16);

/** The checks' ids by request prefix, and those of no prefix, each with the times of the messages holding them. */
function idGroups(checks: readonly RowCheck[]): { byPrefix: Map<string, IdGroup>; others: IdGroup } {
  const byPrefix = new Map<string, IdGroup>();
  const others: IdGroup = { ids: new Set(), fromTs: Number.MAX_SAFE_INTEGER, toTs: 0 };
  for (const check of checks) {
    for (const id of check.ids) {
      const prefix = requestPrefixOf(id);
      let group = prefix === undefined ? others : byPrefix.get(prefix);
      if (!group) byPrefix.set(prefix!, (group = { ids: new Set(), fromTs: check.fromTs, toTs: check.toTs }));
      group.ids.add(id);
      group.fromTs = Math.min(group.fromTs, check.fromTs);
      group.toTs = Math.max(group.toTs, check.toTs);
    }
  }
  return { byPrefix, others };
}

function groupByOrg(checks: readonly RowCheck[]): Map<string, RowCheck[]> {
  const out = new Map<string, RowCheck[]>();
  for (const check of checks) {
    const list = out.get(check.org);
    if (list) list.push(check);
    else out.set(check.org, [check]);
  }
  return out;
}
