import { parseStoredMappings, type VersionedGroupMappings } from '../core/group-mappings';
import type { ClickHouse } from './clickhouse';
import { str } from './sql';

/**
 * What the platform admin requires of a workspace's people: single sign-on
 * (their keys refused), and that keys owned by a person are minted only
 * through that person's own sign-in (docs/governance.md, "Who is a person").
 * Version 0 (never set) requires neither.
 */
export interface SsoRequirement {
  required: boolean;
  person_keys_from_sign_in: boolean;
  version: number;
  updated_at: number;
  actor: string;
}

export const ssoNotRequired: SsoRequirement = { required: false, person_keys_from_sign_in: false, version: 0, updated_at: 0, actor: '' };

/** The workspaces' group mappings (one immutable row per version) and their single sign-on requirement. */
export class SsoRepo {
  constructor(private readonly ch: ClickHouse) {}

  /** Every stored version of the workspace's mappings, oldest first. */
  async mappingVersions(orgId: string): Promise<VersionedGroupMappings[]> {
    const rows = await this.ch.query<Record<string, unknown>>(
      `SELECT version, mappings, created_at, actor FROM ${this.ch.database}.sso_group_mappings FINAL
       WHERE org_id = ${str(orgId)} ORDER BY version`,
    );
    return rows.map(versionOf);
  }

  /** The newest version of every workspace that has one: what person-access looks groups up in. */
  async currentMappings(): Promise<Map<string, VersionedGroupMappings>> {
    const rows = await this.ch.query<Record<string, unknown>>(
      // Aliases unlike the columns: an alias named as a column would stand for the aggregate inside the others.
      `SELECT org_id, max(version) AS latest, argMax(mappings, version) AS latest_mappings,
              argMax(created_at, version) AS latest_created_at, argMax(actor, version) AS latest_actor
       FROM ${this.ch.database}.sso_group_mappings GROUP BY org_id`,
    );
    return new Map(
      rows.map((r) => [String(r.org_id), versionOf({ version: r.latest, mappings: r.latest_mappings, created_at: r.latest_created_at, actor: r.latest_actor })]),
    );
  }

  async putMappings(orgId: string, v: VersionedGroupMappings): Promise<void> {
    const row = { org_id: orgId, version: v.version, mappings: JSON.stringify(v.mappings), created_at: v.created_at, actor: v.actor };
    await this.ch.insertJsonEachRow('sso_group_mappings', JSON.stringify(row) + '\n');
  }

  async requirement(orgId: string): Promise<SsoRequirement> {
    const rows = await this.ch.query<Record<string, unknown>>(
      `SELECT required, person_keys_from_sign_in, version, updated_at, actor FROM ${this.ch.database}.sso_requirements FINAL WHERE org_id = ${str(orgId)}`,
    );
    const row = rows[0];
    if (!row) return ssoNotRequired;
    return {
      required: Number(row.required) === 1,
      person_keys_from_sign_in: Number(row.person_keys_from_sign_in) === 1,
      version: Number(row.version),
      updated_at: Number(row.updated_at),
      actor: String(row.actor),
    };
  }

  async putRequirement(orgId: string, r: SsoRequirement): Promise<void> {
    const row = { org_id: orgId, required: r.required ? 1 : 0, person_keys_from_sign_in: r.person_keys_from_sign_in ? 1 : 0, version: r.version, updated_at: r.updated_at, actor: r.actor };
    await this.ch.insertJsonEachRow('sso_requirements', JSON.stringify(row) + '\n');
  }
}

function versionOf(r: Record<string, unknown>): VersionedGroupMappings {
  return { version: Number(r.version), mappings: parseStoredMappings(String(r.mappings)), created_at: Number(r.created_at), actor: String(r.actor) };
}
