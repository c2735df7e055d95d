import { telemetryHeaderEntries, telemetryHeaderNames } from '../../core/telemetry-headers';
import type { StreamKind } from '../../core/telemetry';
import type { WorkMessage } from '../../workers/telemetry/stream-worker-ports';

/** Pulled messages as plain objects for the stream worker's unit tests: what the worker did to each is in `events`. */
export interface FakeMessage extends WorkMessage {
  id: number;
  events: string[];
}

let nextId = 0;
export interface MessageOptions {
  deliveries?: number;
  rows?: object[];
  kind?: string;
  seq?: number;
  body?: string;
  idempotent?: boolean;
  org?: string;
  /** The event times the message's headers give: [min, max]. */
  times?: [number, number];
  /** A detection digest after the rows (core/flow.ts flowDigestLine), its rows' length in the header. */
  digest?: string;
  /** The rows-bytes header as given, whatever the body holds. */
  rowsBytesHeader?: string;
}

export function message(opts: MessageOptions = {}): FakeMessage {
  const id = (nextId += 1);
  const org = opts.org ?? 'org_a';
  const rows = opts.rows ?? [{ org_id: org, event_id: `evt_${id}`, ts: 1_000, bytes: 10 }];
  const [minTs, maxTs] = opts.times ?? [1_000, 1_000];
  const body = opts.body ?? rows.map((r) => JSON.stringify(r)).join('\n') + '\n';
  const rowsBytes = opts.digest === undefined ? undefined : Buffer.byteLength(body);
  const headers = new Map<string, string>(
    telemetryHeaderEntries({ kind: (opts.kind ?? 'flow') as StreamKind, orgId: org, count: rows.length, minTs, maxTs, idempotent: opts.idempotent, rowsBytes }),
  );
  if (opts.rowsBytesHeader !== undefined) headers.set(telemetryHeaderNames.rowsBytes, opts.rowsBytesHeader);
  const deliveries = opts.deliveries ?? 1;
  const events: string[] = [];
  return {
    id,
    events,
    subject: `t.tel.${opts.kind ?? 'flow'}.${org}`,
    data: Buffer.from(body + (opts.digest ?? '')),
    headers: { get: (k: string) => headers.get(k) ?? '', [Symbol.iterator]: () => [...headers].map(([k, v]) => [k, [v]] as [string, string[]])[Symbol.iterator]() },
    info: { redelivered: deliveries > 1, redeliveryCount: deliveries, streamSequence: opts.seq ?? id, timestampNanos: Date.now() * 1e6 },
    ack: () => events.push('ack'),
    nak: (delay?: number) => events.push(`nak ${delay}`),
    term: () => events.push('term'),
    working: () => events.push('working'),
  };
}
