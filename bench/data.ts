/** Deterministic flow and signal payloads for the bench scenarios. */
export interface FlowBatches {
  bodies: string[];
  flows: number;
  bytes: number;
}

export function flowBatches(opts: { flows: number; batchSize: number; from: number; spanMs: number; dst?: string; seed?: number }): FlowBatches {
  const bodies: string[] = [];
  let lines: string[] = [];
  let bytesTotal = 0;
  let x = opts.seed ?? 1;
  const next = () => {
    x = (x * 1103515245 + 12345) & 0x7fffffff;
    return x;
  };
  for (let i = 0; i < opts.flows; i += 1) {
    const r = next();
    const bytes = 64 + (r % 1400) * 10;
    bytesTotal += bytes;
    const dst = opts.dst ?? `172.20.${(r >> 8) & 15}.${(r >> 12) & 255}`;
    const ts = opts.from + Math.floor((i / opts.flows) * opts.spanMs);
    lines.push(
      `{"src_ip":"10.${(r >> 4) & 7}.${(r >> 16) & 255}.${r & 255}","dst_ip":"${dst}","bytes":${bytes},"packets":${1 + (r % 40)},"protocol":"${r % 3 ? 'tcp' : 'udp'}","dst_port":${r % 1024},"timestamp":${ts}}`,
    );
    if (lines.length === opts.batchSize) {
      bodies.push(lines.join('\n'));
      lines = [];
    }
  }
  if (lines.length) bodies.push(lines.join('\n'));
  return { bodies, flows: opts.flows, bytes: bytesTotal };
}

export function metricEvents(count: number, from: number, spanMs: number): string[] {
  const bodies: string[] = [];
  let lines: string[] = [];
  for (let i = 0; i < count; i += 1) {
    const ts = from + Math.floor((i / count) * spanMs);
    lines.push(`{"service":"svc-${i % 5}","metric":"latency_ms","value":${20 + (i % 50)},"region":"eu","environment":"prod","timestamp":${ts}}`);
    if (lines.length === 5000) {
      bodies.push(lines.join('\n'));
      lines = [];
    }
  }
  if (lines.length) bodies.push(lines.join('\n'));
  return bodies;
}

export function percentile(values: number[], p: number): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

/** The p50 and p99 of latencies, in milliseconds. */
export const spread = (values: number[]) => ({ p50_ms: percentile(values, 50), p99_ms: percentile(values, 99) });

/** Milliseconds from `from` to `to`; Infinity when either is unknown (a missing stage counts as never reached). */
export const elapsedMs = (to: number | undefined, from: number | undefined) =>
  to === undefined || from === undefined || Number.isNaN(to) || Number.isNaN(from) ? Infinity : to - from;

/** An API time (ISO text) in milliseconds since the epoch; undefined when it is null or absent. */
export const timeOf = (text: string | null | undefined) => (text ? Date.parse(text) : undefined);
