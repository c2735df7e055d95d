import { isAddressText } from '../../core/telemetry';
import type { RateFlow } from '../../core/detection/traffic-class';

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

/** The event times a row may carry: those the ingest schema takes (core/telemetry.ts timestamp), given the latest one. */
export interface TimeBounds {
  earliest: number;
  latest: number;
}

const isText = (v: unknown): v is string => typeof v === 'string';
const isCount = (v: unknown): v is number => typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;
const isInRange = (v: unknown, max: number): v is number => isCount(v) && v <= max;
const isOptionalInRange = (v: unknown, max: number) => v === undefined || isInRange(v, max);
const isAddress = (v: unknown): v is string => isText(v) && isAddressText(v);
const uint32 = 4_294_967_295;

/** One parsed row as a RateFlow, or undefined when a needed field is missing or any read field is out of its range. */
function rateFlowOf(row: Record<string, unknown>, times: TimeBounds): RateFlow | undefined {
  const { ts, src_ip, dst_ip, src_port, dst_port, protocol, bytes, packets, tcp_flags, exporter, in_if, out_if } = row;
  if (!isCount(ts) || ts < times.earliest || ts > times.latest) return undefined;
  if (!isAddress(src_ip) || !isAddress(dst_ip) || !isText(protocol) || protocol.length === 0 || protocol.length > 16) return undefined;
  if (!isCount(bytes) || !isCount(packets) || !isOptionalInRange(src_port, 65_535) || !isOptionalInRange(dst_port, 65_535)) return undefined;
  if (!isOptionalInRange(tcp_flags, 0xffff) || !isOptionalInRange(in_if, uint32) || !isOptionalInRange(out_if, uint32)) return undefined;
  if (exporter !== undefined && !isAddress(exporter)) return undefined;
  const flow: RateFlow = { ts, src_ip, dst_ip, src_port: src_port ?? 0, dst_port: dst_port ?? 0, protocol, bytes, packets };
  if (tcp_flags !== undefined) flow.tcp_flags = tcp_flags;
  if (exporter !== undefined) flow.exporter = exporter;
  if (in_if !== undefined) flow.in_if = in_if;
  if (out_if !== undefined) flow.out_if = out_if;
  return flow;
}

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
