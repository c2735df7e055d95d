import { orgIdSchema } from '../../core/ids';
import { hasJsonLinesShape, rowPrefixOf } from '../../core/json-lines';
import type { StreamKind } from '../../core/telemetry';
import { readTelemetryHeaders } from '../../core/telemetry-headers';
import type { WorkMessage } from './stream-worker-ports';

const kinds: ReadonlySet<string> = new Set<StreamKind>(['flow', 'signal', 'metric']);

export type ScreenVerdict = { ok: true } | { ok: false; reason: 'unknown_kind' | 'org_mismatch' | 'bad_times' | 'not_rows_of_org' | 'reserved_field' };

/** A field the storage adds to every flow row (the write that stored it: storage/rollup-repair.ts); no message may bring its own. */
const reservedField = Buffer.from('"write_id"');

/**
 * Whether a pulled message is telemetry as the service's own producers
 * publish it, before any of its bytes go further. Whoever can publish on the
 * telemetry subjects is not trusted: the kind and the org must agree between
 * the subject (`<prefix>.tel.<kind>.<org>[.exp-…]`) and the headers, the
 * times must be numbers, and every line must be a row of that org in the
 * JSONEachRow shape (core/json-lines), without the field the storage adds
 * (an escaped spelling of it cannot override it either: the storage writes it
 * first, see core/json-lines withLeadingField). A message that fails is refused whole.
 */
export function screenMessage(msg: WorkMessage): ScreenVerdict {
  const tokens = msg.subject.split('.');
  const { kind, org, minTs, maxTs } = readTelemetryHeaders(msg.headers);
  if (!kinds.has(kind) || tokens[2] !== kind) return { ok: false, reason: 'unknown_kind' };
  if (!orgIdSchema.safeParse(org).success || tokens[3] !== org) return { ok: false, reason: 'org_mismatch' };
  if (!Number.isSafeInteger(minTs) || !Number.isSafeInteger(maxTs) || minTs > maxTs) return { ok: false, reason: 'bad_times' };
  if (!hasJsonLinesShape(msg.data, rowPrefixOf(org))) return { ok: false, reason: 'not_rows_of_org' };
  if (Buffer.from(msg.data.buffer, msg.data.byteOffset, msg.data.byteLength).includes(reservedField)) return { ok: false, reason: 'reserved_field' };
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
