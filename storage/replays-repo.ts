import { storedPerson, type Person } from '../core/person';
import type { Approval, ReplayStatus } from '../core/replay';
import type { ClickHouse } from './clickhouse';
import { int, str } from './sql';

export interface ReplayRecord {
  org_id: string;
  replay_id: string;
  incident_id: string;
  status: ReplayStatus;
  requested_by: string;
  /** The person who requested it (for a run, who wrote the playbook version it follows); null for a service key. */
  requested_by_person: Person | null;
  requested_at: number;
  updated_at: number;
  window_minutes: number;
  approvals: Approval[];
  report: unknown;
  error: { code: string; message: string } | null;
  /** When the approval gate closes (epoch ms), set once the replay awaits a decision and kept after it (when it would have closed); null before. */
  decision_deadline: number | null;
  /** The active policies that asked for approval when the gate opened; empty before. */
  approval_policies: string[];
  /** The workflow's step count: each state it records has a higher version than the last. */
  version: number;
}

const columns = `org_id, replay_id, incident_id, status, requested_by, requested_by_person, requested_at, updated_at, window_minutes, approvals,
  report, error, decision_deadline, approval_policies, version`;

function fromRow(r: Record<string, unknown>): ReplayRecord {
  return {
    org_id: String(r.org_id),
    replay_id: String(r.replay_id),
    incident_id: String(r.incident_id),
    status: r.status as ReplayStatus,
    requested_by: String(r.requested_by),
    requested_by_person: storedPerson(r.requested_by_person, String(r.requested_by)),
    requested_at: Number(r.requested_at),
    updated_at: Number(r.updated_at),
    window_minutes: Number(r.window_minutes),
    approvals: JSON.parse(String(r.approvals)) as Approval[],
    report: JSON.parse(String(r.report)),
    error: JSON.parse(String(r.error)) as ReplayRecord['error'],
    decision_deadline: Number(r.decision_deadline) || null,
    approval_policies: JSON.parse(typeof r.approval_policies === 'string' && r.approval_policies ? r.approval_policies : '[]') as string[],
    version: Number(r.version),
  };
}

export class ReplaysRepo {
  constructor(private readonly ch: ClickHouse) {}

  async put(r: ReplayRecord): Promise<void> {
    await this.ch.insertJsonEachRow(
      'replays',
      JSON.stringify({
        ...r,
        requested_by_person: JSON.stringify(r.requested_by_person),
        approvals: JSON.stringify(r.approvals),
        report: JSON.stringify(r.report ?? null),
        error: JSON.stringify(r.error),
        decision_deadline: r.decision_deadline ?? 0,
        approval_policies: JSON.stringify(r.approval_policies),
      }) + '\n',
    );
  }

  async get(orgId: string, replayId: string): Promise<ReplayRecord | undefined> {
    const rows = await this.ch.query(
      `SELECT ${columns} FROM ${this.ch.database}.replays FINAL WHERE org_id = ${str(orgId)} AND replay_id = ${str(replayId)}`,
    );
    return rows[0] ? fromRow(rows[0]) : undefined;
  }

  /** Replays of every workspace still `queued` that were requested before `beforeMs`, oldest first. */
  async queuedBefore(beforeMs: number, limit: number): Promise<ReplayRecord[]> {
    // Filtered after FINAL: a replay's latest version decides whether it is still queued.
    const rows = await this.ch.query(
      `SELECT * FROM (SELECT ${columns} FROM ${this.ch.database}.replays FINAL)
       WHERE status = 'queued' AND requested_at < ${int(beforeMs)} ORDER BY requested_at LIMIT ${int(limit)}`,
    );
    return rows.map(fromRow);
  }

  async list(
    orgId: string,
    opts: { status?: ReplayStatus; incidentId?: string; limit: number; after?: { requested_at: number; replay_id: string } },
  ): Promise<ReplayRecord[]> {
    const where: string[] = [];
    if (opts.status) where.push(`status = ${str(opts.status)}`);
    if (opts.incidentId) where.push(`incident_id = ${str(opts.incidentId)}`);
    if (opts.after) {
      where.push(
        `(requested_at < ${int(opts.after.requested_at)} OR (requested_at = ${int(opts.after.requested_at)} AND replay_id < ${str(opts.after.replay_id)}))`,
      );
    }
    const rows = await this.ch.query(
      `SELECT * FROM (SELECT ${columns} FROM ${this.ch.database}.replays FINAL WHERE org_id = ${str(orgId)})
       ${where.length ? 'WHERE ' + where.join(' AND ') : ''} ORDER BY requested_at DESC, replay_id DESC LIMIT ${int(opts.limit)}`,
    );
    return rows.map(fromRow);
  }
}
