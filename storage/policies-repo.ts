import type { Severity } from '../core/correlation';
import type { MitigationAction, StoredPolicy } from '../core/mitigation-policy';
import type { Policy } from '../core/policy';
import type { ClickHouse } from './clickhouse';
import { int, str } from './sql';

const columns = `org_id, id, name, requires_approval, allow_execution, environments, severities, max_window_minutes,
  approval_timeout_minutes, status, created_at, updated_at, version, allowed_actions, max_duration_minutes, max_active_mitigations,
  min_prefix_length_v4, min_prefix_length_v6`;

function fromRow(r: Record<string, unknown>): StoredPolicy {
  return {
    org_id: String(r.org_id),
    id: String(r.id),
    name: String(r.name),
    requires_approval: Number(r.requires_approval) === 1,
    allow_execution: Number(r.allow_execution) === 1,
    environments: JSON.parse(String(r.environments)) as string[],
    severities: JSON.parse(String(r.severities)) as Severity[],
    max_window_minutes: Number(r.max_window_minutes),
    approval_timeout_minutes: Number(r.approval_timeout_minutes),
    status: r.status as Policy['status'],
    created_at: Number(r.created_at),
    updated_at: Number(r.updated_at),
    version: Number(r.version),
    allowed_actions: JSON.parse(String(r.allowed_actions)) as MitigationAction[],
    max_duration_minutes: Number(r.max_duration_minutes),
    max_active_mitigations: Number(r.max_active_mitigations),
    min_prefix_length_v4: Number(r.min_prefix_length_v4),
    min_prefix_length_v6: Number(r.min_prefix_length_v6),
  };
}

/** Policies as versioned rows: an update or a deactivation writes the next version; history stays. Each carries its mitigation bounds. */
export class PoliciesRepo {
  constructor(private readonly ch: ClickHouse) {}

  async put(p: StoredPolicy): Promise<void> {
    await this.ch.insertJsonEachRow(
      'policies',
      JSON.stringify({
        ...p,
        requires_approval: p.requires_approval ? 1 : 0,
        allow_execution: p.allow_execution ? 1 : 0,
        environments: JSON.stringify(p.environments),
        severities: JSON.stringify(p.severities),
        allowed_actions: JSON.stringify(p.allowed_actions),
      }) + '\n',
    );
  }

  async get(orgId: string, id: string): Promise<StoredPolicy | undefined> {
    const rows = await this.ch.query(
      `SELECT ${columns} FROM ${this.ch.database}.policies FINAL WHERE org_id = ${str(orgId)} AND id = ${str(id)}`,
    );
    return rows[0] ? fromRow(rows[0]) : undefined;
  }

  async list(orgId: string, opts: { status?: Policy['status']; limit: number; after?: { created_at: number; id: string } }): Promise<StoredPolicy[]> {
    const where: string[] = [];
    if (opts.status) where.push(`status = ${str(opts.status)}`);
    if (opts.after) {
      where.push(`(created_at < ${int(opts.after.created_at)} OR (created_at = ${int(opts.after.created_at)} AND id < ${str(opts.after.id)}))`);
    }
    const rows = await this.ch.query(
      `SELECT * FROM (SELECT ${columns} FROM ${this.ch.database}.policies FINAL WHERE org_id = ${str(orgId)})
       ${where.length ? 'WHERE ' + where.join(' AND ') : ''} ORDER BY created_at DESC, id DESC LIMIT ${int(opts.limit)}`,
    );
    return rows.map(fromRow);
  }

  async active(orgId: string): Promise<StoredPolicy[]> {
    return this.list(orgId, { status: 'active', limit: 10_000 });
  }
}
