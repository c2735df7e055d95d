import type { StreamKind } from './telemetry';

/**
 * The headers of a telemetry message on JetStream. The publisher
 * (streams/telemetry-publisher.ts) writes them and the stream worker
 * (workers/telemetry/) reads them: both take the names and their encoding
 * from here, so the two sides cannot drift apart.
 */
export const telemetryHeaderNames = {
  kind: 'Nettel-Kind',
  org: 'Nettel-Org',
  count: 'Nettel-Count',
  minTs: 'Nettel-Min-Ts',
  maxTs: 'Nettel-Max-Ts',
  /** `1` on a message whose event ids are deterministic (a batch sent with an Idempotency-Key). */
  idempotent: 'Nettel-Idempotent',
  /** Set on a message's dead-letter copy: the error that refused it. */
  error: 'Nettel-Error',
} as const;

/** What the publisher says of one message's rows. */
export interface TelemetryHeaders {
  kind: StreamKind;
  orgId: string;
  /** Rows in this message (a batch larger than a message is split). */
  count: number;
  minTs: number;
  maxTs: number;
  idempotent?: boolean;
}

/** A message's headers as name and value pairs, for the publisher (and a test that forges a message). */
export function telemetryHeaderEntries(h: TelemetryHeaders): Array<[string, string]> {
  const names = telemetryHeaderNames;
  const entries: Array<[string, string]> = [
    [names.kind, h.kind],
    [names.org, h.orgId],
    [names.count, String(h.count)],
    [names.minTs, String(h.minTs)],
    [names.maxTs, String(h.maxTs)],
  ];
  if (h.idempotent) entries.push([names.idempotent, '1']);
  return entries;
}

/**
 * What a pulled message's headers say, read as they stand: nothing here is
 * trusted yet (the stream worker's screen checks the kind, the org and the
 * times before any byte goes further). A missing kind or org reads as '', a
 * time that is no number as NaN.
 */
export interface ReadTelemetryHeaders {
  kind: string;
  org: string;
  minTs: number;
  maxTs: number;
  idempotent: boolean;
}

export function readTelemetryHeaders(headers: { get(key: string): string } | undefined): ReadTelemetryHeaders {
  const names = telemetryHeaderNames;
  return {
    kind: headers?.get(names.kind) ?? '',
    org: headers?.get(names.org) ?? '',
    minTs: Number(headers?.get(names.minTs)),
    maxTs: Number(headers?.get(names.maxTs)),
    idempotent: headers?.get(names.idempotent) === '1',
  };
}
