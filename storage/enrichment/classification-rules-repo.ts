import type { ClickHouse } from '../clickhouse';
import { int, str } from '../sql';

/** A workspace's classification rules at one version: their text, who wrote it and when (version 0: none, never stored). */
export interface VersionedClassification {
  version: number;
  rules: string;
  created_at: number | null;
  actor: string;
}

export const noClassification: VersionedClassification = { version: 0, rules: '', created_at: null, actor: '' };

/** A workspace's classification rules, one immutable row per version, as detection rules are kept. */
export class ClassificationRulesRepo {
  constructor(private readonly ch: ClickHouse) {}

  /** The version in force: the highest stored, or version 0. */
  async current(orgId: string): Promise<VersionedClassification> {
    const rows = await this.ch.query<Record<string, unknown>>(
      `SELECT version, rules, created_at, actor FROM ${this.ch.database}.classification_rules FINAL
       WHERE org_id = ${str(orgId)} ORDER BY version DESC LIMIT 1`,
    );
    return rows[0] ? rowOf(rows[0]) : noClassification;
  }

  async version(orgId: string, version: number): Promise<VersionedClassification | undefined> {
    if (version === 0) return noClassification;
    const rows = await this.ch.query<Record<string, unknown>>(
      `SELECT version, rules, created_at, actor FROM ${this.ch.database}.classification_rules FINAL
       WHERE org_id = ${str(orgId)} AND version = ${int(version)}`,
    );
    return rows[0] ? rowOf(rows[0]) : undefined;
  }

  async put(orgId: string, v: VersionedClassification): Promise<void> {
    const row = { org_id: orgId, version: v.version, rules: v.rules, created_at: v.created_at ?? 0, actor: v.actor };
    await this.ch.insertJsonEachRow('classification_rules', JSON.stringify(row) + '\n');
  }
}

function rowOf(r: Record<string, unknown>): VersionedClassification {
  return { version: Number(r.version), rules: String(r.rules), created_at: Number(r.created_at), actor: String(r.actor) };
}
