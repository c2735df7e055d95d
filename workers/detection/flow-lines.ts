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
  // One parse of the whole message as an array (NDJSON rows hold no raw newline) costs less than one
  // parse a row; a message with an unreadable row is read again row by row, to skip only that row.
  let rows: unknown;
  try {
    rows = JSON.parse(`[${text.trimEnd().replaceAll('\n', ',')}]`);
  } catch {
    return parseRowByRow(text);
  }
  const flows: RateFlow[] = [];
  let skipped = 0;
  for (const row of rows as unknown[]) {
    const flow = row !== null && typeof row === 'object' ? rateFlowOf(row as Record<string, unknown>) : undefined;
    if (flow) flows.push(flow);
    else skipped += 1;
  }
  return { flows, skipped };
}

function parseRowByRow(text: string): ParsedFlows {
  const flows: RateFlow[] = [];
  let skipped = 0;
  for (const line of text.split('\n')) {
    if (!line) continue;
    let row: unknown;
    try {
      row = JSON.parse(line);
    } catch {
      row = undefined;
    }
    const flow = row !== null && typeof row === 'object' ? rateFlowOf(row as Record<string, unknown>) : undefined;
    if (flow) flows.push(flow);
    else skipped += 1;
  }
  return { flows, skipped };
}
