import type { SignalRow } from '../core/telemetry';
import type { ClickHouse } from './clickhouse';
import { int, str } from './sql';
import { signalColumns, signalFromRow, type KeyOfSignal } from './telemetry-store';

/** Where a key's run of signals starts, and its stored signals from there on. */
export interface KeyRun {
  start: number;
  signals: SignalRow[];
}

type KeySince = KeyOfSignal & { since: number };

const sameKey = (a: KeyOfSignal, b: KeyOfSignal) => a.service === b.service && a.environment === b.environment && a.region === b.region;

/** How far back the first round looks: an hour, or four of the widest windows. */
const firstLookback = (windowMs: number) => Math.max(3_600_000, windowMs * 4);

/**
 * The stored signals the correlator recomputes a key's incidents from: the
 * run of signals that each key's `since` belongs to (walking back from
 * `since` while each signal is within `windowMs` of the next), and every
 * signal of the key from the run's start on. On chDB and on a server every
 * statement costs its turn, so the first look back reads the keys' signals
 * whole, once, for both; a key whose run reaches past it (longer than an
 * hour, or four windows) is followed further back, four times further each
 * round, and its signals read from its start.
 */
export class SignalRuns {
  constructor(private readonly ch: ClickHouse) {}

  async runsOfKeys(orgId: string, keys: readonly KeySince[], windowMs: number): Promise<KeyRun[]> {
    if (keys.length === 0) return [];
    const lookback = firstLookback(windowMs);
    const rows = await this.signalsFrom(orgId, keys.map((k) => ({ ...k, since: k.since - lookback })));
    const runs = keys.map((k) => {
      const mine = rows.filter((r) => sameKey(r, k) && r.ts >= k.since - lookback);
      const { start, gap } = walkBack(k.since, timesBefore(mine, k.since), windowMs);
      return { run: { start, signals: mine.filter((r) => r.ts >= start) }, further: reachesBack(k.since, lookback, start, gap, windowMs) };
    });
    const further = keys.filter((_, i) => runs[i]!.further);
    const longer = further.length ? await this.longRuns(orgId, further, windowMs, lookback * 4) : [];
    return runs.map((r, i) => (r.further ? longer[further.indexOf(keys[i]!)]! : r.run));
  }

  /** Runs that reach past the first look back: their starts found a round at a time, then their signals from there. */
  private async longRuns(orgId: string, keys: readonly KeySince[], windowMs: number, firstRound: number): Promise<KeyRun[]> {
    const starts = keys.map((k) => k.since);
    let open = keys.map((_, i) => i);
    for (let lookback = firstRound; open.length > 0; lookback *= 4) {
      const found = await this.timesBefore(orgId, open.map((i) => ({ ...keys[i]!, from: keys[i]!.since - lookback })));
      open = open.filter((i, j) => {
        const { start, gap } = walkBack(keys[i]!.since, found[j]!, windowMs);
        starts[i] = start;
        return reachesBack(keys[i]!.since, lookback, start, gap, windowMs);
      });
    }
    const rows = await this.signalsFrom(orgId, keys.map((k, i) => ({ ...k, since: starts[i]! })));
    return keys.map((k, i) => ({ start: starts[i]!, signals: rows.filter((r) => sameKey(r, k) && r.ts >= starts[i]!) }));
  }

  /** The times of each key's signals in [from, since), newest first, in one statement. */
  private async timesBefore(orgId: string, keys: ReadonlyArray<KeySince & { from: number }>): Promise<number[][]> {
    const conditions = keys.map((k) => `(${keyCondition(k)} AND ts >= ${int(k.from)} AND ts < ${int(k.since)})`).join(' OR ');
    const rows = await this.ch.query<KeyOfSignal & { ts: string }>(
      `SELECT service, environment, region, ts FROM ${this.ch.database}.signals WHERE org_id = ${str(orgId)} AND (${conditions})`,
    );
    return keys.map((k) =>
      rows
        .filter((r) => sameKey(r, k))
        .map((r) => Number(r.ts))
        .filter((ts) => ts >= k.from && ts < k.since)
        .sort((a, b) => b - a),
    );
  }

  /** Every stored signal of each key from its `since` on, in one statement. */
  private async signalsFrom(orgId: string, keys: readonly KeySince[]): Promise<SignalRow[]> {
    const conditions = keys.map((k) => `(${keyCondition(k)} AND ts >= ${int(k.since)})`).join(' OR ');
    const rows = await this.ch.query(`SELECT ${signalColumns} FROM ${this.ch.database}.signals WHERE org_id = ${str(orgId)} AND (${conditions})`);
    return rows.map(signalFromRow);
  }
}

const keyCondition = (k: KeyOfSignal) => `service = ${str(k.service)} AND environment = ${str(k.environment)} AND region = ${str(k.region)}`;

/** A key's signal times before `since`, newest first. */
const timesBefore = (signals: readonly SignalRow[], since: number) =>
  signals
    .filter((s) => s.ts < since)
    .map((s) => s.ts)
    .sort((a, b) => b - a);

/** No gap within the look back, and it does not reach past the oldest possible signal: the run may start further back. */
const reachesBack = (since: number, lookback: number, start: number, gap: boolean, windowMs: number) =>
  !gap && start - (since - lookback) <= windowMs && since - lookback >= 0;

/** Walks back from `since` over signal times (newest first) while each is within `windowMs` of the next; `gap` when one was further. */
function walkBack(since: number, times: readonly number[], windowMs: number): { start: number; gap: boolean } {
  let start = since;
  for (const ts of times) {
    if (start - ts > windowMs) return { start, gap: true };
    start = ts;
  }
  return { start, gap: false };
}
