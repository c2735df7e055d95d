import { keyColumns, rollupFromFlows, viewFedRollups, type Rollup } from './migrations/flow-tables';
import { markSeconds } from './migrations/folded-rollups';
import type { ClickHouse } from './clickhouse';
import { strList } from './sql';

/** What a repair found for one rollup and one write. */
export interface RollupRepairOutcome {
  table: string;
  writeId: string;
  /** refed: the rollup lacked the write and got it; partial: it holds part of the write, which no repair can tell apart. */
  outcome: 'refed' | 'partial';
}

export interface RollupRepairConfig {
  /** How long a repair waits for an insert of the same write still running on the server before it gives up (and is retried). */
  inFlightWaitMs: number;
  pollMs: number;
}

export const defaultRollupRepairConfig: RollupRepairConfig = { inFlightWaitMs: 120_000, pollMs: 250 };

/** What a repair completes: the view-fed rollups, and (once migration 0062 made them) the marks the folded levels go by. */
export interface RollupRepairScope {
  marks: boolean;
  /** The view-fed rollups as a migration knew them (an older one fed more of them); today's by default. */
  rollups?: readonly Rollup[];
}

/** The query id a write of flows runs under, so a repair can tell whether it is still running. */
export const flowWriteQueryId = (writeId: string): string => `nettel-flows-${writeId}`;

/** A write id is a UInt64 in decimal text (core/ids.ts newWriteId); 0 is a row written without one. */
const isWriteId = (id: string) => /^[1-9][0-9]{0,19}$/.test(id);

export class RollupRepairTimeoutError extends Error {
  constructor(writeIds: readonly string[]) {
    super(`inserts of flows still running after the wait: ${writeIds.length} write(s); the repair is retried with the batch`);
    this.name = 'RollupRepairTimeoutError';
  }
}

/**
 * Completes the flow rollups of writes whose flows are stored. ClickHouse
 * writes an insert's flows part, then each rollup view's part: a crash (of
 * the engine or of this process) between them leaves flows that no
 * redelivery writes again (they are stored) and rollups without them. Each
 * rollup files a receipt per write in the same part as the write's rows
 * (storage/migrations/flow-tables.ts rollupFromFlows); a rollup without the
 * receipt of a write whose flows are stored gets the write's rows again,
 * aggregated from the stored flows, with the receipt.
 *
 * The rollups checked are those the insert's views feed (the minute levels
 * by destination and by source); every coarser level is folded from the
 * minutes or the raw flows (storage/rollup-fold.ts), so the repair marks every stored
 * write's buckets pending once the minutes are complete. A write still
 * running on the server is waited for first, so a repair never races the view
 * parts of an insert that is only slow.
 */
export class RollupRepair {
  constructor(
    private readonly ch: ClickHouse,
    private readonly config: RollupRepairConfig = defaultRollupRepairConfig,
    private readonly scope: RollupRepairScope = { marks: true },
  ) {}

  async complete(writeIds: readonly string[]): Promise<RollupRepairOutcome[]> {
    const ids = [...new Set(writeIds)].filter(isWriteId);
    if (ids.length === 0) return [];
    await this.waitForRunningWrites(ids);
    const stored = await this.storedFlows(ids);
    const out: RollupRepairOutcome[] = [];
    for (const rollup of this.scope.rollups ?? viewFedRollups) {
      const receipts = await this.receipts(rollup.table, ids);
      const missing = ids.filter((id) => stored.has(id) && !receipts.has(id));
      for (const id of ids) if (receipts.has(id) && receipts.get(id) !== stored.get(id)) out.push({ table: rollup.table, writeId: id, outcome: 'partial' });
      if (missing.length === 0) continue;
      const db = this.ch.database;
      const keys = keyColumns(rollup).join(', ');
      const source = `(SELECT * FROM ${db}.flows WHERE write_id IN (${missing.join(', ')}))`;
      await this.ch.exec(
        `INSERT INTO ${db}.${rollup.table} (org_id, minute, ${keys}, write_id, bytes, packets, flows) ${rollupFromFlows({ db, dialect: this.ch.dialect }, rollup, source)}`,
      );
      for (const id of missing) out.push({ table: rollup.table, writeId: id, outcome: 'refed' });
    }
    // After the minutes are complete: a fold trusts a mark's time to come after the minute rows it stands for.
    if (this.scope.marks) await this.markPending([...stored.keys()]);
    return out;
  }

  /**
   * Marks the 5-minute buckets of stored writes pending, so the folded levels
   * (storage/rollup-fold.ts) get them: an attempt cut after its flows part may
   * have left its marks unwritten. A bucket marked again is folded again, which
   * adds only what the coarse level lacks.
   */
  private async markPending(ids: readonly string[]): Promise<void> {
    if (ids.length === 0) return;
    const { database: db, dialect: d } = this.ch;
    await this.ch.exec(
      `INSERT INTO ${db}.rollup_marks (org_id, bucket, kind, at)
       SELECT org_id, ${d.bucketOf('ts', markSeconds)} AS bucket, 'pending' AS kind, ${d.nowTime} AS at FROM ${db}.flows WHERE write_id IN (${ids.join(', ')}) GROUP BY org_id, bucket`,
    );
  }

  /** How many flows each write stored. */
  private async storedFlows(ids: readonly string[]): Promise<Map<string, number>> {
    const rows = await this.ch.query<{ w: string; n: string }>(
      `SELECT toString(write_id) AS w, count() AS n FROM ${this.ch.database}.flows WHERE write_id IN (${ids.join(', ')}) GROUP BY w`,
    );
    return new Map(rows.map((r) => [r.w, Number(r.n)]));
  }

  /** The flows each write's receipt in a rollup counts. */
  private async receipts(table: string, ids: readonly string[]): Promise<Map<string, number>> {
    const rows = await this.ch.query<{ w: string; n: string }>(
      `SELECT toString(write_id) AS w, sum(flows) AS n FROM ${this.ch.database}.${table} WHERE org_id = '' AND write_id IN (${ids.join(', ')}) GROUP BY w`,
    );
    return new Map(rows.map((r) => [r.w, Number(r.n)]));
  }

  /** Waits until no insert of these writes runs on the server (chDB runs none once its call returned). */
  private async waitForRunningWrites(ids: readonly string[]): Promise<void> {
    const deadline = Date.now() + this.config.inFlightWaitMs;
    for (;;) {
      const running = await this.ch.query<{ query_id: string }>(`SELECT query_id FROM system.processes WHERE query_id IN ${strList(ids.map(flowWriteQueryId))}`);
      if (running.length === 0) return;
      if (Date.now() >= deadline) throw new RollupRepairTimeoutError(ids);
      await new Promise((resolve) => setTimeout(resolve, this.config.pollMs));
    }
  }
}
