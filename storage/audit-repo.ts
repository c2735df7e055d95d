import type { AuditEntry } from '../core/audit-chain';
import type { ClickHouse } from './clickhouse';
import { int, str } from './sql';

const columns = 'org_id, seq, at, actor, action, target, details, prev_hash, hash';

function fromRow(row: Record<string, unknown>): AuditEntry {
  return {
    org_id: String(row.org_id),
    seq: Number(row.seq),
    at: Number(row.at),
    actor: String(row.actor),
    action: String(row.action),
    target: String(row.target),
    details: String(row.details),
    prev_hash: String(row.prev_hash),
    hash: String(row.hash),
  };
}

export class AuditRepo {
  constructor(private readonly ch: ClickHouse) {}

  async append(entries: readonly AuditEntry[]): Promise<void> {
    await this.ch.insertJsonEachRow('audit_log', entries.map((e) => JSON.stringify(e) + '\n').join(''));
  }

  async last(orgId: string): Promise<AuditEntry | undefined> {
    const rows = await this.ch.query(
      `SELECT ${columns} FROM ${this.ch.database}.audit_log WHERE org_id = ${str(orgId)} ORDER BY seq DESC LIMIT 1`,
    );
    return rows[0] ? fromRow(rows[0]) : undefined;
  }

  async has(orgId: string, seq: number): Promise<boolean> {
    const rows = await this.ch.query<{ n: string }>(
      `SELECT count() AS n FROM ${this.ch.database}.audit_log WHERE org_id = ${str(orgId)} AND seq = ${int(seq)}`,
    );
    return Number(rows[0]?.n ?? 0) > 0;
  }

  /** Whether the ledger holds an entry of this action on this target (the reconciler's check before it audits a request). */
  async hasAction(orgId: string, action: string, target: string): Promise<boolean> {
    const rows = await this.ch.query<{ n: string }>(
      `SELECT count() AS n FROM ${this.ch.database}.audit_log WHERE org_id = ${str(orgId)} AND action = ${str(action)} AND target = ${str(target)}`,
    );
    return Number(rows[0]?.n ?? 0) > 0;
  }

  /**
   * Entries newest first, below `beforeSeq` when given. DISTINCT folds the
   * identical copy a repair may have written twice; a copy that differs stays
   * and breaks verification.
   */
  async page(orgId: string, opts: { limit: number; beforeSeq?: number }): Promise<AuditEntry[]> {
    const before = opts.beforeSeq !== undefined ? `AND seq < ${int(opts.beforeSeq)}` : '';
    const rows = await this.ch.query(
      `SELECT DISTINCT ${columns} FROM ${this.ch.database}.audit_log WHERE org_id = ${str(orgId)} ${before}
       ORDER BY seq DESC LIMIT ${int(opts.limit)}`,
    );
    return rows.map(fromRow);
  }

  /** Entries in seq order from `fromSeq` on, one chunk at a time. */
  async ascending(orgId: string, opts: { fromSeq: number; limit: number }): Promise<AuditEntry[]> {
    const rows = await this.ch.query(
      `SELECT DISTINCT ${columns} FROM ${this.ch.database}.audit_log WHERE org_id = ${str(orgId)} AND seq >= ${int(opts.fromSeq)}
       ORDER BY seq ASC LIMIT ${int(opts.limit)}`,
    );
    return rows.map(fromRow);
  }
}
