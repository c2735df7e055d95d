import { storedPerson, type Person } from '../core/person';
import type { ClickHouse } from './clickhouse';
import { int, str } from './sql';

/** Whether a workspace makes loosening its guardrails wait for a second person; version 0 (never set): it does not. */
export interface GuardrailSettings {
  four_eyes: boolean;
  version: number;
  updated_at: number;
  actor: string;
}

export const noGuardrailSettings: GuardrailSettings = { four_eyes: false, version: 0, updated_at: 0, actor: '' };

export type GuardrailChangeKind = 'policy.update' | 'policy.deactivate' | 'playbooks.update' | 'guardrails.update';
export type GuardrailChangeStatus = 'awaiting_approval' | 'approved' | 'denied';

/** A change that loosens a guardrail, held for a second person; what it changes is kept as given (JSON) and applied as it was asked. */
export interface GuardrailChange {
  change_id: string;
  org_id: string;
  kind: GuardrailChangeKind;
  /** The policy's id, `playbooks`, or the workspace's org id for its settings. */
  target: string;
  change: unknown;
  /** Why it loosens a guardrail, one sentence each (core/guardrails.ts). */
  reasons: string[];
  requested_by: string;
  requested_by_person: Person | null;
  requested_at: number;
  status: GuardrailChangeStatus;
  decided_by: string;
  decided_by_person: Person | null;
  decided_at: number;
  version: number;
}

const changeColumns =
  'org_id, change_id, kind, target, change, reasons, requested_by, requested_by_person, requested_at, status, decided_by, decided_by_person, decided_at, version';

/** The workspaces' guardrail settings and the loosening changes that wait (or waited) for a second person. */
export class GuardrailsRepo {
  constructor(private readonly ch: ClickHouse) {}

  async settings(orgId: string): Promise<GuardrailSettings> {
    const rows = await this.ch.query<Record<string, unknown>>(
      `SELECT four_eyes, version, updated_at, actor FROM ${this.ch.database}.guardrail_settings FINAL WHERE org_id = ${str(orgId)}`,
    );
    const row = rows[0];
    if (!row) return noGuardrailSettings;
    return { four_eyes: Number(row.four_eyes) === 1, version: Number(row.version), updated_at: Number(row.updated_at), actor: String(row.actor) };
  }

  async putSettings(orgId: string, s: GuardrailSettings): Promise<void> {
    const row = { org_id: orgId, four_eyes: s.four_eyes ? 1 : 0, version: s.version, updated_at: s.updated_at, actor: s.actor };
    await this.ch.insertJsonEachRow('guardrail_settings', JSON.stringify(row) + '\n');
  }

  async change(orgId: string, changeId: string): Promise<GuardrailChange | undefined> {
    return (await this.read(`WHERE org_id = ${str(orgId)} AND change_id = ${str(changeId)}`))[0];
  }

  /** The workspace's changes, newest first; `status` keeps those in it. */
  list(orgId: string, opts: { status?: GuardrailChangeStatus; limit: number }): Promise<GuardrailChange[]> {
    const status = opts.status ? ` AND status = ${str(opts.status)}` : '';
    return this.read(`WHERE org_id = ${str(orgId)}${status} ORDER BY requested_at DESC, change_id DESC LIMIT ${int(opts.limit)}`);
  }

  async put(c: GuardrailChange): Promise<void> {
    const row = {
      ...c,
      change: JSON.stringify(c.change),
      reasons: JSON.stringify(c.reasons),
      requested_by_person: JSON.stringify(c.requested_by_person),
      decided_by_person: c.decided_by ? JSON.stringify(c.decided_by_person) : '',
    };
    await this.ch.insertJsonEachRow('guardrail_changes', JSON.stringify(row) + '\n');
  }

  /**
   * The workspaces whose newest playbooks hold an enabled playbook while no
   * active policy requires an approver: their runs act with nobody deciding.
   */
  async ungatedWorkspaces(limit: number): Promise<string[]> {
    const db = this.ch.database;
    const rows = await this.ch.query<{ org_id: string }>(
      `SELECT org_id FROM (SELECT org_id, argMax(playbooks, version) AS newest FROM ${db}.playbooks GROUP BY org_id)
       WHERE position(newest, '"enabled":true') > 0
         AND org_id NOT IN (SELECT org_id FROM ${db}.policies FINAL WHERE status = 'active' AND requires_approval = 1)
       ORDER BY org_id LIMIT ${int(limit)}`,
    );
    return rows.map((r) => String(r.org_id));
  }

  private async read(clauses: string): Promise<GuardrailChange[]> {
    const rows = await this.ch.query<Record<string, unknown>>(`SELECT ${changeColumns} FROM ${this.ch.database}.guardrail_changes FINAL ${clauses}`);
    return rows.map((r) => ({
      change_id: String(r.change_id),
      org_id: String(r.org_id),
      kind: String(r.kind) as GuardrailChangeKind,
      target: String(r.target),
      change: JSON.parse(String(r.change)) as unknown,
      reasons: JSON.parse(String(r.reasons)) as string[],
      requested_by: String(r.requested_by),
      requested_by_person: storedPerson(r.requested_by_person, ''),
      requested_at: Number(r.requested_at),
      status: String(r.status) as GuardrailChangeStatus,
      decided_by: String(r.decided_by),
      decided_by_person: storedPerson(r.decided_by_person, ''),
      decided_at: Number(r.decided_at),
      version: Number(r.version),
    }));
  }
}
