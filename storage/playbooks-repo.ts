import { parseStoredPlaybooks, type VersionedPlaybooks } from '../core/playbooks';
import type { ClickHouse } from './clickhouse';
import { str } from './sql';

/** A workspace's playbooks, one immutable row per version of the document (version 0, no playbook, is never stored). */
export class PlaybooksRepo {
  constructor(private readonly ch: ClickHouse) {}

  /** Every stored version of the workspace, oldest first. */
  async versions(orgId: string): Promise<VersionedPlaybooks[]> {
    const rows = await this.ch.query<Record<string, unknown>>(
      `SELECT version, playbooks, created_at, actor FROM ${this.ch.database}.playbooks FINAL
       WHERE org_id = ${str(orgId)} ORDER BY version`,
    );
    return rows.map((r) => ({
      version: Number(r.version),
      playbooks: parseStoredPlaybooks(String(r.playbooks)),
      created_at: Number(r.created_at),
      actor: String(r.actor),
    }));
  }

  async put(orgId: string, v: VersionedPlaybooks): Promise<void> {
    const row = { org_id: orgId, version: v.version, playbooks: JSON.stringify(v.playbooks), created_at: v.created_at ?? 0, actor: v.actor };
    await this.ch.insertJsonEachRow('playbooks', JSON.stringify(row) + '\n');
  }
}
