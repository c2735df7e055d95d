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
  /**
   * On a flow message that carries its detection digest after its rows: the
   * rows' length in bytes (the rest is the digest, core/flow.ts flowDigestLine).
   * Absent: the message is rows only.
   */
  rowsBytes: 'Nettel-Rows-Bytes',
  /** `1` on a detection copy that is a digest (streams/detection-feed.ts); absent: the copy is the rows. */
  digest: 'Nettel-Digest',
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
  /** The rows' bytes when the digest follows them. */
  rowsBytes?: number;
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
  if (h.rowsBytes !== undefined) entries.push([names.rowsBytes, String(h.rowsBytes)]);
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

/**
 * Where a message's rows end: the whole data, or the length its rows-bytes
 * header gives. Undefined when that header is there but is no length within
 * the data (the screen refuses such a message whole).
 */
export function rowsEndOf(headers: { get(key: string): string } | undefined, dataBytes: number): number | undefined {
  const text = headers?.get(telemetryHeaderNames.rowsBytes) ?? '';
  if (text === '') return dataBytes;
  if (!/^\d{1,10}$/.test(text)) return undefined;
  const end = Number(text);
  return end <= dataBytes ? end : undefined;
}

/** A telemetry message as far as its rows and digest go. */
interface TelemetryData {
  readonly data: Uint8Array;
  readonly headers?: { get(key: string): string };
}

/** The message's rows: the bytes the writers store (a screened message's rows end where its header says). */
export function rowsOf(message: TelemetryData): Uint8Array {
  const end = rowsEndOf(message.headers, message.data.byteLength) ?? message.data.byteLength;
  return end === message.data.byteLength ? message.data : message.data.subarray(0, end);
}

/** The detection digest after the rows, or undefined when the message carries none (a producer of an earlier release). */
export function digestOf(message: TelemetryData): Uint8Array | undefined {
  const end = rowsEndOf(message.headers, message.data.byteLength);
  return end === undefined || end === message.data.byteLength ? undefined : message.data.subarray(end);
}
