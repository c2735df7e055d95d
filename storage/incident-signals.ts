import type { SignalRow } from '../core/telemetry';
import type { ClickHouse } from './clickhouse';
import { int, str } from './sql';
import { signalColumns, signalFromRow, type KeyOfSignal } from './telemetry-store';

/** Where a page of an incident's signals ended: the last signal's event time and id. */
export interface SignalCursor {
  ts: number;
  event_id: string;
}

/** The part of an incident that decides which stored signals are its own. */
export interface IncidentSpan extends KeyOfSignal {
  first_seen: number;
  last_seen: number;
}

/**
 * An incident's signals, in event-time order. An incident takes every signal
 * of its correlation key from its first to its last (core/correlation: a run
 * of signals, and a resolution ends one), so its span selects exactly them.
 * A signal stored twice (a retry past JetStream's duplicate window) is shown
 * once, as the correlator counts it once.
 */
export class IncidentSignals {
  constructor(private readonly ch: ClickHouse) {}

  async page(orgId: string, span: IncidentSpan, limit: number, after?: SignalCursor): Promise<SignalRow[]> {
    const resume = after ? `AND (ts > ${int(after.ts)} OR (ts = ${int(after.ts)} AND event_id > ${str(after.event_id)}))` : '';
    const rows = await this.ch.query<Record<string, unknown>>(
      `SELECT ${signalColumns} FROM ${this.ch.database}.signals
       WHERE org_id = ${str(orgId)} AND service = ${str(span.service)} AND environment = ${str(span.environment)}
         AND region = ${str(span.region)} AND ts >= ${int(span.first_seen)} AND ts <= ${int(span.last_seen)} ${resume}
       ORDER BY ts, event_id
       LIMIT 1 BY event_id
       LIMIT ${int(limit)}`,
    );
    return rows.map(signalFromRow);
  }
}
