import type { AttackDetails } from '../core/detection/attack-details';
import type { Rates } from '../core/detection/traffic-class';
import type { ClickHouse } from './clickhouse';
import { int, str } from './sql';

/** One rate decision and its attack's details, as stored (storage/migrations/attack-windows.ts). */
export interface AttackWindow {
  org_id: string;
  /** The id of the signal the decision became. */
  event_id: string;
  scope: 'host' | 'prefix';
  target: string;
  host_group: string;
  window_end: number;
  type: string;
  vector: string;
  detector_version: number;
  rules_version: number;
  rates: Rates;
  details: AttackDetails;
  created_at: number;
}

/** Most windows one incident answer reads (a flood judged every second for an hour is 3,600). */
const maxWindows = 10_000;

export class AttackWindowsRepo {
  constructor(private readonly ch: ClickHouse) {}

  async insert(rows: readonly AttackWindow[]): Promise<void> {
    if (rows.length === 0) return;
    const lines = rows.map((r) => JSON.stringify({ ...r, rates: JSON.stringify(r.rates), details: JSON.stringify(r.details) }));
    await this.ch.insertJsonEachRow('attack_windows', lines.join('\n') + '\n');
  }

  /** The target's windows that end within [fromTs, toTs], oldest first. */
  async ofTarget(orgId: string, target: string, fromTs: number, toTs: number): Promise<AttackWindow[]> {
    const rows = await this.ch.query<Record<string, unknown>>(
      `SELECT org_id, event_id, scope, target, host_group, window_end, type, vector, detector_version, rules_version, rates, details, created_at
       FROM ${this.ch.database}.attack_windows FINAL
       WHERE org_id = ${str(orgId)} AND target = ${str(target)} AND window_end >= ${int(fromTs)} AND window_end <= ${int(toTs)}
       ORDER BY window_end, event_id LIMIT ${maxWindows}`,
    );
    return rows.map((r) => ({
      org_id: String(r.org_id),
      event_id: String(r.event_id),
      scope: r.scope === 'prefix' ? 'prefix' : 'host',
      target: String(r.target),
      host_group: String(r.host_group),
      window_end: Number(r.window_end),
      type: String(r.type),
      vector: String(r.vector),
      detector_version: Number(r.detector_version),
      rules_version: Number(r.rules_version),
      rates: JSON.parse(String(r.rates)) as Rates,
      details: JSON.parse(String(r.details)) as AttackDetails,
      created_at: Number(r.created_at),
    }));
  }
}
