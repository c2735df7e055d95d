import { z } from 'zod';
import { counter, earliestTimestamp, ip, isAddressText, latestTimestamp, protocolSchema, timestamp, type Stamped } from './telemetry';
import type { RowFields } from './row-shape';

/**
 * A flow: who talked to whom, how much, over what. The first eight fields
 * are what every flow carries; the rest are what NetFlow, IPFIX and sFlow
 * exporters add (interfaces, AS numbers, TCP flags, ToS, the flow's own
 * start and end, the sampling rate), optional on the HTTP path.
 */
const uint32 = z.number().int().min(0).max(4_294_967_295);
export const flowSchema = z
  .object({
    src_ip: ip,
    dst_ip: ip,
    bytes: counter,
    packets: counter,
    protocol: protocolSchema,
    src_port: z.number().int().min(0).max(65535).optional(),
    dst_port: z.number().int().min(0).max(65535).optional(),
    timestamp: timestamp.optional(),
    exporter: ip.optional(),
    in_if: uint32.optional(),
    out_if: uint32.optional(),
    src_as: uint32.optional(),
    dst_as: uint32.optional(),
    tcp_flags: z.number().int().min(0).max(0xffff).optional(),
    tos: z.number().int().min(0).max(255).optional(),
    flow_start: timestamp.optional(),
    flow_end: timestamp.optional(),
    sampling_rate: uint32.optional(),
  })
  .strict();

export type FlowInput = z.output<typeof flowSchema>;

/** The fields the hand-written path below reads; a record with any other goes through the schema. */
const fastFields = new Set(['src_ip', 'dst_ip', 'bytes', 'packets', 'protocol', 'src_port', 'dst_port', 'timestamp']);
const isCounter = (v: unknown) => typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;
const isPort = (v: unknown) => v === undefined || (typeof v === 'number' && Number.isInteger(v) && v >= 0 && v <= 65535);
const isAddress = (v: unknown) => typeof v === 'string' && isAddressText(v);
const isEpoch = (v: unknown) => v === undefined || (typeof v === 'number' && Number.isSafeInteger(v) && v >= earliestTimestamp && v <= latestTimestamp());

/**
 * The flow hot path: the rules of flowSchema for the eight common fields
 * written out by hand, about ten times faster than the schema. It only ever
 * accepts what the schema accepts (a test holds them to it); anything it
 * does not accept, including an ISO timestamp or an exporter's field, goes
 * through flowSchema, which also words the errors.
 */
export function parseFlow(value: unknown): z.ZodSafeParseResult<FlowInput> {
  if (typeof value === 'object' && value !== null && !Array.isArray(value)) {
    const r = value as Record<string, unknown>;
    let known = true;
    for (const key in r) if (!fastFields.has(key)) known = false;
    const protocol = typeof r.protocol === 'string' ? r.protocol.trim().toLowerCase() : '';
    if (
      known &&
      isAddress(r.src_ip) &&
      isAddress(r.dst_ip) &&
      isCounter(r.bytes) &&
      isCounter(r.packets) &&
      protocol.length >= 1 &&
      protocol.length <= 16 &&
      isPort(r.src_port) &&
      isPort(r.dst_port) &&
      isEpoch(r.timestamp)
    ) {
      const data: FlowInput = {
        src_ip: r.src_ip as string,
        dst_ip: r.dst_ip as string,
        bytes: r.bytes as number,
        packets: r.packets as number,
        protocol,
        src_port: r.src_port as number | undefined,
        dst_port: r.dst_port as number | undefined,
        timestamp: r.timestamp as number | undefined,
      };
      return { success: true, data };
    }
  }
  return flowSchema.safeParse(value);
}

/** The exporter's fields as stored; each is present only when the flow carried it. */
export interface FlowExtras {
  exporter?: string;
  in_if?: number;
  out_if?: number;
  src_as?: number;
  dst_as?: number;
  tcp_flags?: number;
  tos?: number;
  flow_start?: number;
  flow_end?: number;
  sampling_rate?: number;
}
const extraFields = ['exporter', 'in_if', 'out_if', 'src_as', 'dst_as', 'tcp_flags', 'tos', 'flow_start', 'flow_end', 'sampling_rate'] as const;

/** A flow row's fields in the order toFlowRow and flowRowJson write them: the stream workers' screen holds every row to it (core/row-shape). */
/**
 * The fields enrichment appends to a stored line (core/enrichment/flow-enrichment.ts writes them in this
 * order, each only when known). The AS numbers are not among them: they fill the row's own src_as/dst_as.
 */
export const enrichmentRowFields = [
  ['src_country', 'string'], ['dst_country', 'string'],
  ['src_net_name', 'string'], ['src_net_role', 'string'], ['src_net_site', 'string'], ['src_net_tenant', 'string'],
  ['dst_net_name', 'string'], ['dst_net_role', 'string'], ['dst_net_site', 'string'], ['dst_net_tenant', 'string'],
  ['enrichment_version', 'number'],
] as const;

export const flowRowFields: RowFields = [
  ['org_id', 'string'], ['event_id', 'string'], ['ts', 'number'], ['received_at', 'number'],
  ['src_ip', 'string'], ['dst_ip', 'string'], ['src_port', 'number'], ['dst_port', 'number'],
  ['protocol', 'string'], ['bytes', 'number'], ['packets', 'number'], ['exporter', 'string'],
  ...extraFields.slice(1).map((f) => [f, 'number'] as const),
  ...enrichmentRowFields,
];

export interface FlowRow extends Stamped, FlowExtras {
  src_ip: string;
  dst_ip: string;
  src_port: number;
  dst_port: number;
  protocol: string;
  bytes: number;
  packets: number;
}

/**
 * The sampling rule: a flow sampled 1 in N packets stands for N times its
 * bytes and packets, so stored volumes are scaled by N. An absent or zero
 * rate counts as 1. (The collector picks N: the workspace's registered rate
 * for the exporter when set, else the rate the exporter reported.)
 */
export const scaledBySampling = (n: number, rate: number | undefined): number =>
  rate !== undefined && rate > 1 ? Math.min(n * rate, Number.MAX_SAFE_INTEGER) : n;

// Rows are built as literals, field by field: a spread of `stamp` first made V8
// build slow dictionary objects on the ingest hot path (6 µs a flow).
export function toFlowRow(input: FlowInput, stamp: Stamped): FlowRow {
  const row: FlowRow = {
    org_id: stamp.org_id,
    event_id: stamp.event_id,
    ts: input.timestamp ?? stamp.ts,
    received_at: stamp.received_at,
    src_ip: input.src_ip,
    dst_ip: input.dst_ip,
    src_port: input.src_port ?? 0,
    dst_port: input.dst_port ?? 0,
    protocol: input.protocol,
    bytes: scaledBySampling(input.bytes, input.sampling_rate),
    packets: scaledBySampling(input.packets, input.sampling_rate),
  };
  for (const field of extraFields) if (input[field] !== undefined) (row as unknown as Record<string, unknown>)[field] = input[field];
  return row;
}

/**
 * JSON.stringify(toFlowRow(input, stamp)), written out: the ingest hot path
 * builds a flow's stored line without an intermediate object. Addresses
 * hold only hex digits, dots and colons, and org and event ids are
 * [A-Za-z0-9_-], so only the protocol needs JSON escaping; a unit test holds
 * the two to the same output. `tail` is the enrichment's fields, already
 * written as JSON (core/enrichment/flow-enrichment.ts enrichmentJsonTail).
 * `digest` is the same flow's line of the detection digest
 * (flowDigestLine below), from the same values.
 */
export function flowRowJson(input: FlowInput, stamp: Stamped, tail = ''): { json: string; ts: number; digest: string } {
  const ts = input.timestamp ?? stamp.ts;
  const rate = input.sampling_rate;
  const bytes = scaledBySampling(input.bytes, rate);
  const packets = scaledBySampling(input.packets, rate);
  let json =
    `{"org_id":"${stamp.org_id}","event_id":"${stamp.event_id}","ts":${ts},"received_at":${stamp.received_at},` +
    `"src_ip":"${input.src_ip}","dst_ip":"${input.dst_ip}","src_port":${input.src_port ?? 0},"dst_port":${input.dst_port ?? 0},` +
    `"protocol":${JSON.stringify(input.protocol)},"bytes":${bytes},"packets":${packets}`;
  if (input.exporter !== undefined) json += `,"exporter":"${input.exporter}"`;
  if (input.in_if !== undefined) json += `,"in_if":${input.in_if}`;
  if (input.out_if !== undefined) json += `,"out_if":${input.out_if}`;
  if (input.src_as !== undefined) json += `,"src_as":${input.src_as}`;
  if (input.dst_as !== undefined) json += `,"dst_as":${input.dst_as}`;
  if (input.tcp_flags !== undefined) json += `,"tcp_flags":${input.tcp_flags}`;
  if (input.tos !== undefined) json += `,"tos":${input.tos}`;
  if (input.flow_start !== undefined) json += `,"flow_start":${input.flow_start}`;
  if (input.flow_end !== undefined) json += `,"flow_end":${input.flow_end}`;
  if (rate !== undefined) json += `,"sampling_rate":${rate}`;
  const { src_ip, dst_ip, protocol, tcp_flags, exporter, in_if, out_if } = input;
  const digest = flowDigestLine({ ts, src_ip, dst_ip, src_port: input.src_port ?? 0, dst_port: input.dst_port ?? 0, protocol, bytes, packets, tcp_flags, exporter, in_if, out_if });
  return { json: json + tail + '}', ts, digest };
}

/**
 * The detection digest: of each stored flow, only the fields the rate
 * detectors read (DigestedFlow: core/detection/traffic-class.ts RateFlow), one
 * tab-separated line a flow:
 *
 *   ts  src_ip  dst_ip  src_port  dst_port  protocol  bytes  packets  tcp_flags  exporter  in_if  out_if
 *
 * an absent optional field left empty. Why it exists: the stream workers
 * copy what they wrote to the rate detectors (streams/detection-feed.ts), and
 * a copy of the enriched rows made nats-server store and deliver every flow
 * byte twice more, and the detectors parse 30 fields to read 12. The producers
 * write a flow's digest line beside its row (flowRowJson below), from
 * the same values, and it travels in the telemetry message after the rows
 * (core/telemetry-headers.ts rowsBytes) until the writers copy it alone.
 *
 * A protocol holding a tab, a newline or a quote (the ingest schema allows
 * any text of 1 to 16 characters) is written as a JSON string, so every line
 * stays one line of twelve fields; every other field is digits or an address.
 * It is read by core/detection/flow-digest-reader.ts, which trusts none of it.
 */
export const flowDigestColumns = ['ts', 'src_ip', 'dst_ip', 'src_port', 'dst_port', 'protocol', 'bytes', 'packets', 'tcp_flags', 'exporter', 'in_if', 'out_if'] as const;

/** What a digest line says of a flow: the stored row's fields the rate detectors read. */
export type DigestedFlow = Pick<FlowRow, 'ts' | 'src_ip' | 'dst_ip' | 'src_port' | 'dst_port' | 'protocol' | 'bytes' | 'packets'> &
  Partial<Pick<FlowRow, 'tcp_flags' | 'exporter' | 'in_if' | 'out_if'>>;

const needsQuoting = /[\t\n\r"\\]/;

/** A flow's digest line (no newline), its fields as the stored row holds them. */
export function flowDigestLine(f: DigestedFlow): string {
  const protocol = needsQuoting.test(f.protocol) || f.protocol.startsWith('"') ? JSON.stringify(f.protocol) : f.protocol;
  return (
    `${f.ts}\t${f.src_ip}\t${f.dst_ip}\t${f.src_port}\t${f.dst_port}\t${protocol}\t${f.bytes}\t${f.packets}\t` +
    `${f.tcp_flags ?? ''}\t${f.exporter ?? ''}\t${f.in_if ?? ''}\t${f.out_if ?? ''}`
  );
}

