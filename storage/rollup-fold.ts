import { bucketMs } from '../core/resolution';
import type { ClickHouse } from './clickhouse';
import { keyColumns, type Rollup } from './migrations/flow-tables';
import { foldedRollups } from './migrations/folded-rollups';
import { str } from './sql';

/**
 * The 5-minute and hourly flow rollups, folded from the minute level (issue
 * 37: on every insert their views cost a third of its CPU, writing as many
 * rows as the minute level), and the dimension rollups, folded from the raw
 * flows (5 minutes) and from their own 5-minute level (hours). Every insert of flows marks the 5-minute buckets
 * it touched as pending (migration 0062's view). A fold takes the pending
 * buckets that have closed and, for each family (by destination, by source),
 * inserts into the 5-minute level what it lacks of the minute level's sums
 * (a delta: minute sums minus coarse sums, one snapshot of both), then the
 * same for the hours from the 5-minute level (by dimension: the 5 minutes
 * from the raw flows, then the hours), then marks the buckets folded
 * at the time it read them. A fold run twice, or cut by a crash and run
 * again, adds nothing twice: only what the coarse level lacks. A Replicated
 * table would drop a delta equal to an earlier one as a duplicate insert
 * (two folds of a steady load can add the same rows), so the fold's inserts
 * are never deduplicated. One process
 * folds at a time (a lock, service/roles/stream-workers.ts): two folds
 * computing the same delta at once would both add it.
 *
 * A bucket stays pending while any mark of it is as late as its latest
 * folded mark (ties stay pending), so a late row's bucket is folded again.
 * The analysts' planner reads pending buckets from the minutes
 * (core/resolution.ts), so answers are exact at every moment.
 *
 * Why a mark's time may be trusted: marks come from the insert's own view at
 * the server's time; a fold reads the time first, then waits for every insert
 * of flows still running (on chDB, those its adapter has in hand), so
 * every mark older than that time belongs to an insert whose minute rows the
 * fold reads.
 */
export interface RollupFoldConfig {
  /** A bucket is folded this long after it closed, when late rows have mostly arrived. */
  closedForMs: number;
  /** Buckets folded in one round at most (the oldest first). */
  maxBuckets: number;
  /** How long a fold waits for inserts of flows still running on the server, and how often it looks. */
  runningWaitMs: number;
  pollMs: number;
}

export const defaultRollupFoldConfig: RollupFoldConfig = { closedForMs: 60_000, maxBuckets: 2_016, runningWaitMs: 120_000, pollMs: 250 };

/** A pending bucket of one workspace: its start in epoch milliseconds. */
export interface PendingBucket {
  orgId: string;
  bucket: number;
}

export class RollupFoldTimeoutError extends Error {
  constructor() {
    super('inserts of flows still running after the wait; the fold runs again at its next round');
    this.name = 'RollupFoldTimeoutError';
  }
}

/** The pending-marks condition of a group of marks of one bucket. */
const stillPending = "maxIf(at, kind = 'pending') >= maxIf(at, kind = 'folded')";

/** The 5-minute buckets of a workspace within [from, to) whose minutes are not folded yet. */
export async function pendingBuckets(ch: Pick<ClickHouse, 'database' | 'dialect' | 'query'>, orgId: string, from: number, to: number): Promise<Set<number>> {
  const d = ch.dialect;
  const first = Math.floor(from / bucketMs['5m']) * bucketMs['5m'];
  const rows = await ch.query<{ b: string }>(
    `SELECT toString(${d.bucketMs('bucket')}) AS b FROM ${ch.database}.rollup_marks
     WHERE org_id = ${str(orgId)} AND bucket >= ${d.bucketLiteral(first)} AND bucket < ${d.bucketLiteral(to)}
     GROUP BY bucket HAVING ${stillPending}`,
  );
  return new Set(rows.map((r) => Number(r.b)));
}

export class RollupFold {
  constructor(
    private readonly ch: ClickHouse,
    private readonly config: RollupFoldConfig = defaultRollupFoldConfig,
    /** The levels folded, finer before coarser: every folded level (a probe may time some apart). */
    private readonly levels: readonly Rollup[] = foldedRollups,
  ) {}

  /**
   * One fold of the oldest closed pending buckets (`openToo`: the open ones
   * too, for tests and tools); returns those it folded. `refoldAfterMs`
   * leaves a bucket folded less than that long ago pending, for a later
   * round (workers/telemetry/rollup-folder.ts says why).
   */
  async foldOnce(opts: { openToo?: boolean; refoldAfterMs?: number } = {}): Promise<PendingBucket[]> {
    const d = this.ch.dialect;
    const [now] = await this.ch.query<{ v: string }>(`SELECT toString(${d.bucketMs(d.nowTime)}) AS v`);
    const readAt = Number(now!.v);
    await this.waitForRunningInserts();
    const buckets = await this.closedPending(opts.openToo ? Number.MAX_SAFE_INTEGER / 2 : readAt, opts.refoldAfterMs ? readAt - opts.refoldAfterMs : undefined);
    if (buckets.length === 0) return [];
    for (const r of this.levels) await this.foldLevel(r, buckets);
    await this.markFolded(buckets, readAt);
    return buckets;
  }

  /** Folds until no closed bucket is pending (a back-fill, the bench's seed); returns how many it folded. */
  async foldAll(opts: { openToo?: boolean } = {}): Promise<number> {
    let total = 0;
    for (let folded = await this.foldOnce(opts); folded.length > 0; folded = await this.foldOnce(opts)) total += folded.length;
    return total;
  }

  /** Pending buckets closed by `readAt`, and when `foldedBefore` is given, last folded before it. */
  private async closedPending(readAt: number, foldedBefore?: number): Promise<PendingBucket[]> {
    const d = this.ch.dialect;
    const rested = foldedBefore === undefined ? '' : ` AND maxIf(at, kind = 'folded') < ${d.bucketLiteral(foldedBefore)}`;
    const closedBefore = Math.floor((readAt - this.config.closedForMs) / bucketMs['5m']) * bucketMs['5m'] - bucketMs['5m'];
    const rows = await this.ch.query<{ org_id: string; b: string }>(
      `SELECT org_id, toString(${d.bucketMs('bucket')}) AS b FROM ${this.ch.database}.rollup_marks
       WHERE bucket <= ${d.bucketLiteral(closedBefore)} GROUP BY org_id, bucket
       HAVING ${stillPending}${rested}
       ORDER BY bucket, org_id LIMIT ${Math.trunc(this.config.maxBuckets)}`,
    );
    return rows.map((r) => ({ orgId: r.org_id, bucket: Number(r.b) }));
  }

  /** Adds to one coarse rollup what it lacks of the next finer level's sums, for the buckets of `buckets` at its size. */
  private async foldLevel(r: Rollup, buckets: readonly PendingBucket[]): Promise<void> {
    const db = this.ch.database;
    const keys = keyColumns(r).join(', ');
    const size = r.seconds * 1000;
    const within = bucketsWhere(this.ch, buckets, size);
    const fine = finerSums(this.ch, r, keys, within);
    const coarse = `SELECT org_id, minute AS bucket, ${keys}, sum(bytes) AS c_bytes, sum(packets) AS c_packets, sum(flows) AS c_flows
      FROM ${db}.${r.table} WHERE ${within.range('minute')} AND ${within.pairs('minute')} GROUP BY org_id, bucket, ${keys}`;
    await this.ch.exec(
      `INSERT INTO ${db}.${r.table} (org_id, minute, ${keys}, write_id, bytes, packets, flows)
       SELECT org_id, bucket, ${keys}, toUInt64(0), m_bytes - c_bytes, m_packets - c_packets, m_flows - c_flows
       FROM (${fine}) AS fine ALL LEFT JOIN (${coarse}) AS coarse USING (org_id, bucket, ${keys})
       WHERE (m_bytes > c_bytes OR m_packets > c_packets OR m_flows > c_flows) AND m_bytes >= c_bytes AND m_packets >= c_packets AND m_flows >= c_flows
       SETTINGS insert_deduplicate = 0`,
    );
  }

  private async markFolded(buckets: readonly PendingBucket[], readAt: number): Promise<void> {
    const d = this.ch.dialect;
    const marks = buckets.map((b) => `(${str(b.orgId)}, ${d.bucketLiteral(b.bucket)})`).join(', ');
    await this.ch.exec(
      `INSERT INTO ${this.ch.database}.rollup_marks (org_id, bucket, kind, at)
       SELECT tupleElement(m, 1) AS org_id, tupleElement(m, 2) AS bucket, 'folded' AS kind, ${d.bucketLiteral(readAt)} AS at FROM (SELECT arrayJoin([${marks}]) AS m)`,
    );
  }

  /** Waits until every insert of flows running now has ended: chDB's adapter follows its own, a server lists them in system.processes. */
  private async waitForRunningInserts(): Promise<void> {
    if (this.ch.insertsSettled) return this.ch.insertsSettled();
    const running = async () =>
      new Set((await this.ch.query<{ query_id: string }>(`SELECT query_id FROM system.processes WHERE query_id LIKE 'nettel-flows-%'`)).map((r) => r.query_id));
    const seen = await running();
    const deadline = Date.now() + this.config.runningWaitMs;
    while (seen.size > 0) {
      const still = await running();
      for (const id of seen) if (!still.has(id)) seen.delete(id);
      if (seen.size === 0) return;
      if (Date.now() >= deadline) throw new RollupFoldTimeoutError();
      await new Promise((resolve) => setTimeout(resolve, this.config.pollMs));
    }
  }
}

/**
 * The next finer level's sums of the pending buckets, at `r`'s bucket size:
 * a finer rollup's rows, or the raw flows' (a flow counts one). The range
 * keeps the read on the primary key, the pairs make it exact.
 */
function finerSums(ch: ClickHouse, r: Rollup, keys: string, within: ReturnType<typeof bucketsWhere>): string {
  const d = ch.dialect;
  const raw = r.from === 'flows';
  const time = raw ? 'ts' : 'minute';
  const range = within.range(time, raw ? 'time' : 'bucket');
  return `SELECT org_id, ${d.bucketOf(time, r.seconds)} AS bucket, ${keys}, sum(bytes) AS m_bytes, sum(packets) AS m_packets, ${raw ? 'count()' : 'sum(flows)'} AS m_flows
      FROM ${ch.database}.${r.from} WHERE ${range} AND ${within.pairs(d.bucketOf(time, r.seconds))} GROUP BY org_id, bucket, ${keys}`;
}

/** Conditions on a bucket column for a set of pending 5-minute buckets, at a coarser bucket size. */
function bucketsWhere(ch: ClickHouse, buckets: readonly PendingBucket[], size: number) {
  const d = ch.dialect;
  const starts = buckets.map((b) => ({ orgId: b.orgId, start: Math.floor(b.bucket / size) * size }));
  const first = Math.min(...starts.map((s) => s.start));
  const last = Math.max(...starts.map((s) => s.start)) + size;
  const unique = [...new Map(starts.map((s) => [`${s.orgId}\u0000${s.start}`, s])).values()];
  return {
    /** A range on the primary key that holds every bucket (the finer level's rows, or the coarse level's), on a bucket column or the raw flows' time. */
    range: (column: string, type: 'bucket' | 'time' = 'bucket') => {
      const literal = (ms: number) => (type === 'time' ? d.timeLiteral(ms) : d.bucketLiteral(ms));
      return `${column} >= ${literal(first)} AND ${column} < ${literal(last)}`;
    },
    /** Exactly the pending (workspace, bucket) pairs, `bucket` an expression of the bucket's start. */
    pairs: (bucket: string) => `(org_id, ${bucket}) IN (${unique.map((s) => `(${str(s.orgId)}, ${d.bucketLiteral(s.start)})`).join(', ')})`,
  };
}

