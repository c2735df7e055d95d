import { isAddressText } from '../telemetry';
import type { RateFlow } from './traffic-class';

/**
 * A flow the rate detectors read from a message anyone who can publish on
 * the detection feed could have written: every field is checked against the
 * ranges the ingest schema allows (core/flow.ts, core/telemetry.ts) before
 * it counts, whichever encoding carried it (the stored rows or their
 * digest, core/flow.ts flowDigestLine).
 */

/** The event times a flow may carry: those the ingest schema takes (core/telemetry.ts timestamp), given the latest one. */
export interface TimeBounds {
  earliest: number;
  latest: number;
}

/** The fields as read, before any is trusted. */
export interface UntrustedFlowFields {
  ts?: unknown;
  src_ip?: unknown;
  dst_ip?: unknown;
  src_port?: unknown;
  dst_port?: unknown;
  protocol?: unknown;
  bytes?: unknown;
  packets?: unknown;
  tcp_flags?: unknown;
  exporter?: unknown;
  in_if?: unknown;
  out_if?: unknown;
}

const isText = (v: unknown): v is string => typeof v === 'string';
const isCount = (v: unknown): v is number => typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;
const isInRange = (v: unknown, max: number): v is number => isCount(v) && v <= max;
const isOptionalInRange = (v: unknown, max: number) => v === undefined || isInRange(v, max);
const isAddress = (v: unknown): v is string => isText(v) && isAddressText(v);
const uint32 = 4_294_967_295;

/** The fields as a RateFlow, or undefined when a needed field is missing or any read field is out of its range. */
export function rateFlowOf(fields: UntrustedFlowFields, times: TimeBounds): RateFlow | undefined {
  const { ts, src_ip, dst_ip, src_port, dst_port, protocol, bytes, packets, tcp_flags, exporter, in_if, out_if } = fields;
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
