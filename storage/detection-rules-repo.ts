import { parseStoredRules, type VersionedRules } from '../core/detection-rules';
import type { ClickHouse } from './clickhouse';
import { str } from './sql';

/** A workspace's detection rules, one immutable row per version (version 0, the defaults, is never stored). */
export class DetectionRulesRepo {
  constructor(private readonly ch: ClickHouse) {}

  /** Every stored version of the workspace, oldest first. */
  async versions(orgId: string): Promise<VersionedRules[]> {
    const rows = await this.ch.query<Record<string, unknown>>(
      `SELECT version, rules, created_at, actor FROM ${this.ch.database}.detection_rules FINAL
       WHERE org_id = ${str(orgId)} ORDER BY version`,
    );
    return rows.map((r) => ({
      version: Number(r.version),
      rules: parseStoredRules(String(r.rules)),
      created_at: Number(r.created_at),
      actor: String(r.actor),
    }));
  }

  /** The highest stored version, 0 when none is. */
  async latestVersion(orgId: string): Promise<number> {
    const rows = await this.ch.query<{ v: string }>(
      `SELECT max(version) AS v FROM ${this.ch.database}.detection_rules WHERE org_id = ${str(orgId)}`,
    );
    return Number(rows[0]?.v ?? 0);
  }

  async put(orgId: string, v: VersionedRules): Promise<void> {
    const row = { org_id: orgId, version: v.version, rules: JSON.stringify(v.rules), created_at: v.created_at, actor: v.actor };
    await this.ch.insertJsonEachRow('detection_rules', JSON.stringify(row) + '\n');
  }

}
