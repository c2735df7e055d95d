import { PeriodicRound } from '../core/periodic-round';
import type { Logger } from '../observability/logger';
import { engineErrorsCounter, type Registry } from '../observability/metrics';
import type { ClickHouse } from './clickhouse';
import type { Retention } from './migrations/migration';
import { retainedTables, type RetainedTable } from './retention';
import { str, strList } from './sql';

export function expiredPartitions(partitions: readonly string[], nowMs: number, retentionDays: number): string[] {
  const oldestKept = Math.floor(nowMs / 86_400_000) - retentionDays + 1;
  return partitions.filter((p) => /^\d+$/.test(p) && Number(p) < oldestKept);
}

/**
 * Retention on legacy ClickHouse (18.16 has no TTL clause): whole daily
 * partitions (day numbers, intDiv(ts, 86400000)) past each table's retention
 * are dropped; a table without daily partitions (unknown_exporters) has its
 * expired rows deleted by a mutation, run only when it holds some. Current
 * ClickHouse expires rows by the tables' TTL instead, and the job does
 * nothing there.
 */
export class RetentionJob {
  private readonly rounds: PeriodicRound;

  constructor(
    private readonly config: { retention: Retention; intervalMs: number },
    private readonly deps: { clickhouse: ClickHouse; log: Logger; registry: Registry; now?: () => number },
  ) {
    this.rounds = new PeriodicRound(config.intervalMs, () => this.runOnce());
  }

  start(): Promise<void> {
    this.rounds.start({ now: true });
    return Promise.resolve();
  }

  stop(): Promise<void> {
    return this.rounds.stop();
  }

  /** Drops every partition older than its table's retention (legacy ClickHouse only); returns what it dropped. */
  async runOnce(): Promise<Array<{ table: string; partition: string }>> {
    const ch = this.deps.clickhouse;
    const dropped: Array<{ table: string; partition: string }> = [];
    if (ch.dialect.generation !== 'legacy') return dropped;
    try {
      const parts = await ch.query<{ table: string; partition: string }>(
        `SELECT DISTINCT table, partition FROM system.parts
         WHERE database = ${str(ch.database)} AND active AND table IN ${strList(retainedTables.map((t) => t.table))}`,
      );
      const now = (this.deps.now ?? Date.now)();
      for (const retained of retainedTables) {
        const { table } = retained;
        const expired = expiredPartitions(parts.filter((p) => p.table === table).map((p) => p.partition), now, retained.days(this.config.retention));
        for (const partition of expired) {
          await ch.exec(`ALTER TABLE ${ch.database}.${table} DROP PARTITION ${partition}`);
          dropped.push({ table, partition });
        }
        if (parts.some((p) => p.table === table && !/^\d+$/.test(p.partition)) && (await this.deleteExpiredRows(retained, now))) {
          dropped.push({ table, partition: 'rows' });
        }
      }
      if (dropped.length) this.deps.log.info({ dropped }, 'retention dropped expired partitions');
    } catch (err) {
      engineErrorsCounter(this.deps.registry).inc({ engine: 'clickhouse', operation: 'retention' });
      this.deps.log.error({ err }, 'retention run failed; it runs again at the next interval');
    }
    return dropped;
  }

  /** Deletes a table's rows past its retention when it holds some; true when it did. */
  private async deleteExpiredRows(retained: RetainedTable, nowMs: number): Promise<boolean> {
    const ch = this.deps.clickhouse;
    const expired = `${retained.ttlTime} < toDateTime(${Math.floor(nowMs / 1000) - Math.trunc(retained.days(this.config.retention)) * 86_400})`;
    const [row] = await ch.query<{ n: string }>(`SELECT count() AS n FROM ${ch.database}.${retained.table} WHERE ${expired}`);
    if (Number(row?.n ?? 0) === 0) return false;
    await ch.exec(`ALTER TABLE ${ch.database}.${retained.table} DELETE WHERE ${expired}`);
    return true;
  }
}
