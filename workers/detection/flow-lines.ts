import type { RateFlow } from '../../core/detection/traffic-class';
import { rateFlowOf, type TimeBounds } from '../../core/detection/untrusted-flow';

/**
 * A detection copy's flow rows (NDJSON, the stored rows the writers wrote),
 * read for the fields the rate detectors and the attack's details need.
 * Whoever can publish on the feed's subjects is not trusted: the writers
 * copy only rows their screen passed, so a message with any row that is not
 * one of the subject's workspace, in the ranges the ingest schema allows
 * (core/flow.ts, core/telemetry.ts), is refused whole, never guessed at and
 * never partly counted. No schema per flow: this runs on every flow.
 */
export type FlowRowsVerdict = { ok: true; flows: RateFlow[] } | { ok: false; reason: 'not_rows' | 'org_mismatch' | 'bad_row' };

/** The message's rows, every one of `org` and in range, or why the message is refused. */
export function readFlowRows(data: Uint8Array, org: string, times: TimeBounds): FlowRowsVerdict {
  const text = Buffer.from(data.buffer, data.byteOffset, data.byteLength).toString('utf8');
  // One parse of the whole message as an array (NDJSON rows hold no raw newline) costs less than one parse a row.
  let rows: unknown;
  try {
    rows = JSON.parse(`[${text.trimEnd().replaceAll('\n', ',')}]`);
  } catch {
    return { ok: false, reason: 'not_rows' };
  }
  if (!Array.isArray(rows) || rows.length === 0) return { ok: false, reason: 'not_rows' };
  const flows: RateFlow[] = [];
  for (const row of rows as unknown[]) {
    if (row === null || typeof row !== 'object' || Array.isArray(row)) return { ok: false, reason: 'not_rows' };
    const fields = row as Record<string, unknown>;
    if (fields.org_id !== org) return { ok: false, reason: 'org_mismatch' };
    const flow = rateFlowOf(fields, times);
    if (!flow) return { ok: false, reason: 'bad_row' };
    flows.push(flow);
  }
  return { ok: true, flows };
}
