import { orgIdSchema } from '../../core/ids';
import { flowRowFields } from '../../core/flow';
import { hasRowsOf, rowShapeOf, type RowShape } from '../../core/row-shape';
import { metricRowFields, signalRowFields, type StreamKind } from '../../core/telemetry';
import { readTelemetryHeaders, rowsEndOf, rowsOf } from '../../core/telemetry-headers';
import type { WorkMessage } from './stream-worker-ports';

/** Each kind's row shape: the stream the kind's rows are written to takes no other field. */
const shapes: ReadonlyMap<string, RowShape> = new Map<StreamKind, RowShape>([
  ['flow', rowShapeOf(flowRowFields)],
  ['signal', rowShapeOf(signalRowFields)],
  ['metric', rowShapeOf(metricRowFields)],
]);

export type ScreenVerdict = { ok: true } | { ok: false; reason: 'unknown_kind' | 'org_mismatch' | 'bad_times' | 'bad_rows_bytes' | 'not_rows_of_org' | 'reserved_field' };

/** A field the storage adds to every flow row (the write that stored it: storage/rollup-repair.ts); no message may bring its own. */
const reservedField = Buffer.from('"write_id"');

/**
 * Whether a pulled message is telemetry as the service's own producers
 * publish it, before any of its bytes go further. Whoever can publish on the
 * telemetry subjects is not trusted: the kind and the org must agree between
 * the subject (`<prefix>.tel.<kind>.<org>[.exp-…]`) and the headers, the
 * times must be numbers, and every line must be exactly one row of that org
 * in the kind's shape, parsed (core/row-shape: one object per line, so a second
 * object after the first never reaches ClickHouse), without the field the
 * storage adds (an escaped spelling of it is no field of the shape either). A
 * flow message's rows end where its rows-bytes header says (a length within
 * the message, or it is refused): the detection digest after them is the rate
 * detectors' to screen, never written. A message that fails is refused whole.
 */
export function screenMessage(msg: WorkMessage): ScreenVerdict {
  const tokens = msg.subject.split('.');
  const { kind, org, minTs, maxTs } = readTelemetryHeaders(msg.headers);
  const shape = shapes.get(kind);
  if (!shape || tokens[2] !== kind) return { ok: false, reason: 'unknown_kind' };
  if (!orgIdSchema.safeParse(org).success || tokens[3] !== org) return { ok: false, reason: 'org_mismatch' };
  if (!Number.isSafeInteger(minTs) || !Number.isSafeInteger(maxTs) || minTs > maxTs) return { ok: false, reason: 'bad_times' };
  if (rowsEndOf(msg.headers, msg.data.byteLength) === undefined) return { ok: false, reason: 'bad_rows_bytes' };
  const rows = rowsOf(msg);
  if (Buffer.from(rows.buffer, rows.byteOffset, rows.byteLength).includes(reservedField)) return { ok: false, reason: 'reserved_field' };
  if (!hasRowsOf(rows, org, shape)) return { ok: false, reason: 'not_rows_of_org' };
  return { ok: true };
}

/** A message refused by the screen: its bytes went nowhere but the dead-letter stream. */
export class RefusedMessageError extends Error {
  constructor(
    subject: string,
    readonly reason: string,
  ) {
    super(`refused the message on ${subject}: ${reason.replace(/_/g, ' ')}`);
    this.name = 'RefusedMessageError';
  }
}
