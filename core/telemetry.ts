import { isIPv6 } from 'node:net';
import { isIPv4Text } from './ipv4-text';
import { z } from 'zod';
import type { RowFields } from './row-shape';

/**
 * The three kinds of telemetry the service takes, validated strictly:
 * addresses are IPv4 or IPv6, counters are non-negative safe integers,
 * strings are bounded, unknown fields are refused. `timestamp` (event time,
 * ISO 8601 or epoch milliseconds) is optional and defaults to receive time.
 */
export const telemetryKinds = ['flow', 'bgp', 'dns', 'metric'] as const;
export type TelemetryKind = (typeof telemetryKinds)[number];

// node:net's rules, not a regular expression of our own: the same rule everywhere (IPv4 checked by hand
// to the same rule, ipv4-text.ts: the hot path's every flow has two addresses).
// IPv6 zone ids (fe80::1%eth0) name a local interface, not an address: refused.
/** The one address rule: IPv4 or IPv6 text, no zone id. Ingestion, filters and replays use it. */
export const isAddressText = (s: string) => isIPv4Text(s) || (s.length <= 64 && !s.includes('%') && isIPv6(s));
export const ip = z.string().refine(isAddressText, 'must be an IPv4 or IPv6 address');
export const counter = z.number().int().min(0).max(Number.MAX_SAFE_INTEGER);
/** Service, environment and region names: trimmed, 1-128 characters. Filters use the same rule. */
export const labelSchema = z.string().trim().min(1).max(128);
const label = labelSchema;
/** Protocols are stored lower-case; a filter normalizes its value the same way. */
export const protocolSchema = z.string().trim().toLowerCase().min(1).max(16);
export const earliestTimestamp = Date.UTC(2000, 0, 1);
/** Event times may run up to a day ahead of this clock (exporters' clocks drift). */
export const latestTimestamp = () => Date.now() + 86_400_000;
export const timestamp = z
  .union([z.number().int(), z.iso.datetime({ offset: true })])
  .transform((v) => (typeof v === 'number' ? v : Date.parse(v)))
  .refine((ms) => ms >= earliestTimestamp && ms <= latestTimestamp(), 'must be between 2000-01-01 and one day from now');

export const signalSchema = z
  .object({
    telemetry: z.enum(telemetryKinds),
    service: label,
    environment: label,
    region: label,
    asn: z.number().int().min(0).max(4_294_967_295).optional(),
    src_ip: ip.optional(),
    dst_ip: ip.optional(),
    dst_port: z.number().int().min(0).max(65535).optional(),
    bytes: counter.optional(),
    latency_ms: z.number().int().min(0).max(86_400_000).optional(),
    timestamp: timestamp.optional(),
  })
  .strict();

export const metricEventSchema = z
  .object({
    service: label,
    metric: z.string().trim().min(1).max(128),
    value: z.number().finite(),
    region: label,
    environment: label.optional(),
    timestamp: timestamp.optional(),
  })
  .strict();

export type SignalInput = z.output<typeof signalSchema>;
export type MetricInput = z.output<typeof metricEventSchema>;

/** Rows as stored: every row carries its org, event id, event time and receive time (epoch ms). */
export interface Stamped {
  org_id: string;
  event_id: string;
  ts: number;
  received_at: number;
}

export interface SignalRow extends Stamped {
  telemetry: TelemetryKind;
  service: string;
  environment: string;
  region: string;
  asn: number;
  src_ip: string;
  dst_ip: string;
  dst_port: number;
  bytes: number;
  latency_ms: number;
  /** Which rule produced a derived signal (detectors); empty for posted signals. */
  rule: string;
}

export interface MetricRow extends Stamped {
  service: string;
  environment: string;
  metric: string;
  value: number;
  region: string;
}

export type StreamKind = 'flow' | 'signal' | 'metric';

/** A signal row's fields in the order toSignalRow writes them (the stream workers' screen, core/row-shape). */
export const signalRowFields: RowFields = [
  ['org_id', 'string'], ['event_id', 'string'], ['ts', 'number'], ['received_at', 'number'],
  ['telemetry', 'string'], ['service', 'string'], ['environment', 'string'], ['region', 'string'],
  ['asn', 'number'], ['src_ip', 'string'], ['dst_ip', 'string'], ['dst_port', 'number'],
  ['bytes', 'number'], ['latency_ms', 'number'], ['rule', 'string'],
];

/** What every row read back must carry; its other fields may be absent (ClickHouse stores their defaults), never of another type or out of bounds. */
const stampedSchema = {
  org_id: z.string().regex(/^[A-Za-z0-9_-]{1,64}$/),
  event_id: z.string().min(1).max(128),
  ts: z.number().int(),
};
const required = { org_id: true, event_id: true, ts: true } as const;

/** A signal row read back from the telemetry stream (the stream workers feed it to the correlator): its producers' bounds. */
export const signalRowSchema = z
  .object({
    ...stampedSchema,
    received_at: z.number().int(),
    telemetry: z.enum(telemetryKinds),
    service: label,
    environment: label,
    region: label,
    asn: z.number().int().min(0).max(4_294_967_295),
    src_ip: z.string().max(64),
    dst_ip: z.string().max(64),
    dst_port: z.number().int().min(0).max(65535),
    bytes: counter,
    latency_ms: z.number().int().min(0).max(86_400_000),
    rule: z.string().max(128),
  })
  .partial()
  .required(required)
  .strict();

/** A metric row read back from the telemetry stream (the detectors take it). */
export const metricRowSchema = z
  .object({ ...stampedSchema, received_at: z.number().int(), service: label, environment: z.string().max(128), metric: z.string().min(1).max(128), value: z.number().finite(), region: label })
  .partial()
  .required(required)
  .strict();

/** A metric row's fields in the order toMetricRow writes them. */
export const metricRowFields: RowFields = [
  ['org_id', 'string'], ['event_id', 'string'], ['ts', 'number'], ['received_at', 'number'],
  ['service', 'string'], ['environment', 'string'], ['metric', 'string'], ['value', 'number'], ['region', 'string'],
];

export function toSignalRow(input: SignalInput, stamp: Stamped): SignalRow {
  return {
    org_id: stamp.org_id,
    event_id: stamp.event_id,
    ts: input.timestamp ?? stamp.ts,
    received_at: stamp.received_at,
    telemetry: input.telemetry,
    service: input.service,
    environment: input.environment,
    region: input.region,
    asn: input.asn ?? 0,
    src_ip: input.src_ip ?? '',
    dst_ip: input.dst_ip ?? '',
    dst_port: input.dst_port ?? 0,
    bytes: input.bytes ?? 0,
    latency_ms: input.latency_ms ?? 0,
    rule: '',
  };
}

export function toMetricRow(input: MetricInput, stamp: Stamped): MetricRow {
  return {
    org_id: stamp.org_id,
    event_id: stamp.event_id,
    ts: input.timestamp ?? stamp.ts,
    received_at: stamp.received_at,
    service: input.service,
    environment: input.environment ?? '',
    metric: input.metric,
    value: input.value,
    region: input.region,
  };
}
