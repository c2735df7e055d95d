import { networkSchema, type VersionedNetworks } from '../../core/enrichment/networks';
import type { ClickHouse } from '../clickhouse';
import { int, str } from '../sql';

/** A stored document's networks, read again through the schema (a row this process did not write is no less hostile). */
function parseStored(text: string): VersionedNetworks['networks'] {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return [];
  }
  const parsed = networkSchema.array().safeParse(value);
  return parsed.success ? parsed.data : [];
}

const fromRow = (r: Record<string, unknown>): VersionedNetworks => ({
  version: Number(r.version),
  networks: parseStored(String(r.networks)),
  created_at: Number(r.created_at),
  actor: String(r.actor),
});

/** A workspace's networks, one immutable row per version (version 0, none, is never stored). */
export class NetworksRepo {
  constructor(private readonly ch: ClickHouse) {}

  /** Every stored version of the workspace, oldest first. */
  async versions(orgId: string): Promise<VersionedNetworks[]> {
    const rows = await this.ch.query<Record<string, unknown>>(
      `SELECT version, networks, created_at, actor FROM ${this.ch.database}.workspace_networks FINAL WHERE org_id = ${str(orgId)} ORDER BY version`,
    );
    return rows.map(fromRow);
  }

  async put(orgId: string, v: VersionedNetworks): Promise<void> {
    const row = { org_id: orgId, version: v.version, networks: JSON.stringify(v.networks), created_at: v.created_at, actor: v.actor };
    await this.ch.insertJsonEachRow('workspace_networks', JSON.stringify(row) + '\n');
  }

  /** The latest version number of every workspace that has networks. */
  async latestVersions(): Promise<Map<string, number>> {
    const rows = await this.ch.query<{ org_id: string; v: string }>(`SELECT org_id, max(version) AS v FROM ${this.ch.database}.workspace_networks GROUP BY org_id`);
    return new Map(rows.map((r) => [String(r.org_id), Number(r.v)]));
  }

  /** One version of a workspace's networks, if stored. */
  async atVersion(orgId: string, version: number): Promise<VersionedNetworks | undefined> {
    const rows = await this.ch.query<Record<string, unknown>>(
      `SELECT version, networks, created_at, actor FROM ${this.ch.database}.workspace_networks FINAL
       WHERE org_id = ${str(orgId)} AND version = ${int(version)} LIMIT 1`,
    );
    return rows[0] ? fromRow(rows[0]) : undefined;
  }
}
