import type { RateFlow } from '../../core/detection/traffic-class';

/**
 * A detection copy's flow rows (NDJSON, the stored rows the writers wrote),
 * read for the fields the rate detectors and the attack's details need, and
 * nothing else: no schema per flow (the writers' screen checked every row
 * before it was stored, and this runs on every flow). A row whose fields are
 * not of the expected types is skipped and counted, never guessed at.
 */
export interface ParsedFlows {
  flows: RateFlow[];
  skipped: number;
}

const isNumber = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);
const isText = (v: unknown): v is string => typeof v === 'string';

/** One parsed row as a RateFlow, or undefined when a needed field is missing or mistyped. */
function rateFlowOf(row: Record<string, unknown>): RateFlow | undefined {
  const { ts, src_ip, dst_ip, src_port, dst_port, protocol, bytes, packets, tcp_flags, exporter, in_if, out_if } = row;
  if (!isNumber(ts) || !isText(src_ip) || !isText(dst_ip) || !isText(protocol) || !isNumber(bytes) || !isNumber(packets)) return undefined;
  const flow: RateFlow = {
    ts,
    src_ip,
    dst_ip,
    src_port: isNumber(src_port) ? src_port : 0,
    dst_port: isNumber(dst_port) ? dst_port : 0,
    protocol,
    bytes,
    packets,
  };
  if (isNumber(tcp_flags)) flow.tcp_flags = tcp_flags;
  if (isText(exporter)) flow.exporter = exporter;
  if (isNumber(in_if)) flow.in_if = in_if;
  if (isNumber(out_if)) flow.out_if = out_if;
  return flow;
}

export function parseFlowLines(data: Uint8Array): ParsedFlows {
  const text = Buffer.from(data.buffer, data.byteOffset, data.byteLength).toString('utf8');
  const flows: RateFlow[] = [];
  let skipped = 0;
  for (let start = 0; start < text.length; ) {
    let end = text.indexOf('\n', start);
    if (end === -1) end = text.length;
    if (end > start) {
      let row: unknown;
      try {
        row = JSON.parse(text.slice(start, end));
      } catch {
        row = undefined;
      }
      const flow = row !== null && typeof row === 'object' ? rateFlowOf(row as Record<string, unknown>) : undefined;
      if (flow) flows.push(flow);
      else skipped += 1;
    }
    start = end + 1;
  }
  return { flows, skipped };
}
