import { storedPerson, type Person } from '../core/person';
import type { Approval } from '../core/replay';
import type { AutomationStatus, PlannedAction } from '../core/automation-plan';
import type { ClickHouse } from './clickhouse';
import { int, str } from './sql';

/** An automation run as stored: the workflow's state at its latest step. */
export interface AutomationRecord {
  org_id: string;
  automation_id: string;
  incident_id: string;
  playbook_id: string;
  playbook_version: number;
  status: AutomationStatus;
  requested_by: string;
  /** The person who requested it (for a run, who wrote the playbook version it follows); null for a service key. */
  requested_by_person: Person | null;
  requested_at: number;
  updated_at: number;
  approvals: Approval[];
  actions: PlannedAction[];
  error: { code: string; message: string } | null;
  /** When the approval gate closes (epoch ms); null before the run awaits a decision. */
  decision_deadline: number | null;
  approval_policies: string[];
  /** The workflow's step count: each state it records has a higher version than the last. */
  version: number;
}

const columns = `org_id, automation_id, incident_id, playbook_id, playbook_version, status, requested_by, requested_by_person, requested_at, updated_at,
  approvals, actions, error, decision_deadline, approval_policies, version`;

const json = <T>(value: unknown, fallback: T): T => (typeof value === 'string' && value ? (JSON.parse(value) as T) : fallback);

function fromRow(r: Record<string, unknown>): AutomationRecord {
  return {
    org_id: String(r.org_id),
    automation_id: String(r.automation_id),
    incident_id: String(r.incident_id),
    playbook_id: String(r.playbook_id),
    playbook_version: Number(r.playbook_version),
    status: r.status as AutomationStatus,
    requested_by: String(r.requested_by),
    requested_by_person: storedPerson(r.requested_by_person, String(r.requested_by)),
    requested_at: Number(r.requested_at),
    updated_at: Number(r.updated_at),
    approvals: json<Approval[]>(r.approvals, []),
    actions: json<PlannedAction[]>(r.actions, []),
    error: json<AutomationRecord['error']>(r.error, null),
    decision_deadline: Number(r.decision_deadline) || null,
    approval_policies: json<string[]>(r.approval_policies, []),
    version: Number(r.version),
  };
}

export class AutomationsRepo {
  constructor(private readonly ch: ClickHouse) {}

  async put(r: AutomationRecord): Promise<void> {
    await this.ch.insertJsonEachRow(
      'automations',
      JSON.stringify({
        ...r,
        requested_by_person: JSON.stringify(r.requested_by_person),
        approvals: JSON.stringify(r.approvals),
        actions: JSON.stringify(r.actions),
        error: JSON.stringify(r.error),
        decision_deadline: r.decision_deadline ?? 0,
        approval_policies: JSON.stringify(r.approval_policies),
      }) + '\n',
    );
  }

  async get(orgId: string, automationId: string): Promise<AutomationRecord | undefined> {
    const rows = await this.ch.query(
      `SELECT ${columns} FROM ${this.ch.database}.automations FINAL WHERE org_id = ${str(orgId)} AND automation_id = ${str(automationId)}`,
    );
    return rows[0] ? fromRow(rows[0]) : undefined;
  }

  /** The runs of every workspace (or of one) whose latest state is `active`: the platform admin's view of what is announced. */
  async active(orgId?: string): Promise<AutomationRecord[]> {
    const rows = await this.ch.query(
      `SELECT * FROM (SELECT ${columns} FROM ${this.ch.database}.automations FINAL${orgId === undefined ? '' : ` WHERE org_id = ${str(orgId)}`})
       WHERE status = 'active' ORDER BY org_id, automation_id LIMIT 10000`,
    );
    return rows.map(fromRow);
  }

  /** A workspace's runs, newest first; filtered after FINAL, so a run's latest step decides its status. */
  async list(
    orgId: string,
    opts: { status?: AutomationStatus; incidentId?: string; limit: number; after?: { requested_at: number; automation_id: string } },
  ): Promise<AutomationRecord[]> {
    const where: string[] = [];
    if (opts.status) where.push(`status = ${str(opts.status)}`);
    if (opts.incidentId) where.push(`incident_id = ${str(opts.incidentId)}`);
    if (opts.after) {
      where.push(
        `(requested_at < ${int(opts.after.requested_at)} OR (requested_at = ${int(opts.after.requested_at)} AND automation_id < ${str(opts.after.automation_id)}))`,
      );
    }
    const rows = await this.ch.query(
      `SELECT * FROM (SELECT ${columns} FROM ${this.ch.database}.automations FINAL WHERE org_id = ${str(orgId)})
       ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY requested_at DESC, automation_id DESC LIMIT ${int(opts.limit)}`,
    );
    return rows.map(fromRow);
  }
}
