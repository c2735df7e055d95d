import type { Incident, IncidentState, Severity, Transition } from '../core/correlation';
import type { TelemetryKind } from '../core/telemetry';
import type { ClickHouse } from './clickhouse';
import type { KeyOfSignal } from './telemetry-store';
import { int, keyIn, str } from './sql';

export interface IncidentFilters {
  state?: IncidentState;
  severity?: Severity;
  service?: string;
  environment?: string;
  since?: number;
}

export interface IncidentCursor {
  first_seen: number;
  id: string;
}

const columns = `org_id, id, service, environment, region, severity, state, source, rule, escalations, first_seen, last_seen,
  signal_count, kinds, max_latency_ms, total_bytes, version, rules_version, updated_at, superseded`;

export interface StoredIncident extends Incident {
  updated_at: number;
  superseded: boolean;
}

function fromRow(r: Record<string, unknown>): StoredIncident {
  return {
    id: String(r.id),
    org_id: String(r.org_id),
    service: String(r.service),
    environment: String(r.environment),
    region: String(r.region),
    severity: r.severity as Severity,
    state: r.state as IncidentState,
    source: 'deterministic_engine',
    rule: String(r.rule),
    escalations: JSON.parse(String(r.escalations)) as string[],
    first_seen: Number(r.first_seen),
    last_seen: Number(r.last_seen),
    signal_count: Number(r.signal_count),
    kinds: JSON.parse(String(r.kinds)) as TelemetryKind[],
    max_latency_ms: Number(r.max_latency_ms),
    total_bytes: Number(r.total_bytes),
    version: Number(r.version),
    rules_version: Number(r.rules_version ?? 0),
    updated_at: Number(r.updated_at),
    superseded: Number(r.superseded) === 1,
  };
}

function toRow(incident: Incident, updatedAt: number, superseded: boolean) {
  return JSON.stringify({
    ...incident,
    escalations: JSON.stringify(incident.escalations),
    kinds: JSON.stringify(incident.kinds),
    updated_at: updatedAt,
    superseded: superseded ? 1 : 0,
  });
}

/** Incidents as versioned rows (the highest version wins) and the people's transitions of them. */
export class IncidentsRepo {
  constructor(private readonly ch: ClickHouse) {}

  private get db() {
    return this.ch.database;
  }

  /** Incidents of these keys seen at or after `lastSeenFrom` (all of them when it is absent). */
  async ofKeys(orgId: string, keys: KeyOfSignal[], lastSeenFrom?: number): Promise<StoredIncident[]> {
    if (keys.length === 0) return [];
    const recent = lastSeenFrom === undefined ? '' : `WHERE last_seen >= ${int(lastSeenFrom)}`;
    const rows = await this.ch.query(
      `SELECT * FROM (SELECT ${columns} FROM ${this.db}.incidents FINAL
       WHERE org_id = ${str(orgId)} AND ${keyIn(keys)}) ${recent}`,
    );
    return rows.map(fromRow);
  }

  /** Every transition made on incidents of these keys. */
  async transitionsOfKeys(orgId: string, keys: KeyOfSignal[]): Promise<Transition[]> {
    if (keys.length === 0) return [];
    const rows = await this.ch.query<Record<string, unknown>>(
      `SELECT incident_id, service, environment, region, state, at, through_ts FROM ${this.db}.incident_transitions
       WHERE org_id = ${str(orgId)} AND ${keyIn(keys)}`,
    );
    return rows.map((r) => ({
      incident_id: String(r.incident_id),
      org_id: orgId,
      service: String(r.service),
      environment: String(r.environment),
      region: String(r.region),
      state: r.state as Transition['state'],
      at: Number(r.at),
      through_ts: Number(r.through_ts),
    }));
  }

  async write(rows: Array<{ incident: Incident; superseded: boolean }>, updatedAt: number): Promise<void> {
    if (rows.length === 0) return;
    await this.ch.insertJsonEachRow('incidents', rows.map((r) => toRow(r.incident, updatedAt, r.superseded)).join('\n') + '\n');
  }

  async addTransition(orgId: string, transition: Transition, actor: string): Promise<void> {
    await this.ch.insertJsonEachRow('incident_transitions', JSON.stringify({ ...transition, org_id: orgId, actor }) + '\n');
  }

  async get(orgId: string, id: string): Promise<StoredIncident | undefined> {
    const rows = await this.ch.query(
      `SELECT * FROM (SELECT ${columns} FROM ${this.db}.incidents FINAL WHERE org_id = ${str(orgId)} AND id = ${str(id)})
       WHERE superseded = 0`,
    );
    return rows[0] ? fromRow(rows[0]) : undefined;
  }

  /** Newest first by first_seen; `after` continues a previous page. */
  async list(orgId: string, filters: IncidentFilters, limit: number, after?: IncidentCursor): Promise<StoredIncident[]> {
    // Only sorting-key columns filter before FINAL; the rest filter the merged rows.
    const where = ['superseded = 0'];
    if (filters.state) where.push(`state = ${str(filters.state)}`);
    if (filters.severity) where.push(`severity = ${str(filters.severity)}`);
    if (filters.service) where.push(`service = ${str(filters.service)}`);
    if (filters.environment) where.push(`environment = ${str(filters.environment)}`);
    if (filters.since !== undefined) where.push(`last_seen >= ${int(filters.since)}`);
    if (after) {
      where.push(`(first_seen < ${int(after.first_seen)} OR (first_seen = ${int(after.first_seen)} AND id < ${str(after.id)}))`);
    }
    const rows = await this.ch.query(
      `SELECT * FROM (SELECT ${columns} FROM ${this.db}.incidents FINAL WHERE org_id = ${str(orgId)})
       WHERE ${where.join(' AND ')} ORDER BY first_seen DESC, id DESC LIMIT ${int(limit)}`,
    );
    return rows.map(fromRow);
  }
}
