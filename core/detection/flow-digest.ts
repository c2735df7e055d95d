/**
 * The detection digest: of each stored flow, only the fields the rate
 * detectors read (RateFlow), one tab-separated line a flow:
 *
 *   ts  src_ip  dst_ip  src_port  dst_port  protocol  bytes  packets  tcp_flags  exporter  in_if  out_if
 *
 * an absent optional field left empty. Why it exists: the stream workers
 * copy what they wrote to the rate detectors (streams/detection-feed.ts), and
 * a copy of the enriched rows made nats-server store and deliver every flow
 * byte twice more, and the detectors parse 30 fields to read 12. The producers
 * write a flow's digest line beside its row (core/flow.ts flowRowJson), from
 * the same values, and it travels in the telemetry message after the rows
 * (core/telemetry-headers.ts rowsBytes) until the writers copy it alone.
 *
 * A protocol holding a tab, a newline or a quote (the ingest schema allows
 * any text of 1 to 16 characters) is written as a JSON string, so every line
 * stays one line of twelve fields; every other field is digits or an address.
 * It is read by flow-digest-reader.ts, which trusts none of it.
 */
export const flowDigestColumns = ['ts', 'src_ip', 'dst_ip', 'src_port', 'dst_port', 'protocol', 'bytes', 'packets', 'tcp_flags', 'exporter', 'in_if', 'out_if'] as const;

/** What a digest line says of a flow: a RateFlow's fields (core/detection/traffic-class.ts), as the stored row holds them. */
export interface DigestedFlow {
  ts: number;
  src_ip: string;
  dst_ip: string;
  src_port: number;
  dst_port: number;
  protocol: string;
  bytes: number;
  packets: number;
  tcp_flags?: number;
  exporter?: string;
  in_if?: number;
  out_if?: number;
}

const needsQuoting = /[\t\n\r"\\]/;

/** A flow's digest line (no newline), its fields as the stored row holds them. */
export function flowDigestLine(f: DigestedFlow): string {
  const protocol = needsQuoting.test(f.protocol) || f.protocol.startsWith('"') ? JSON.stringify(f.protocol) : f.protocol;
  return (
    `${f.ts}\t${f.src_ip}\t${f.dst_ip}\t${f.src_port}\t${f.dst_port}\t${protocol}\t${f.bytes}\t${f.packets}\t` +
    `${f.tcp_flags ?? ''}\t${f.exporter ?? ''}\t${f.in_if ?? ''}\t${f.out_if ?? ''}`
  );
}

