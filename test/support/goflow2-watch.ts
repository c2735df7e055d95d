import { readFileSync } from 'node:fs';

/**
 * What a test reads of the GoFlow2 child process from outside: its resident
 * memory, and its own Prometheus page (the collector stack is started with
 * COLLECTOR_METRICS_PORT set, so the test knows where it is).
 */

/** A process's resident memory in bytes (Linux: VmRSS in /proc/<pid>/status). */
export function residentBytes(pid: number): number {
  const kb = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
  if (kb === undefined) throw new Error(`no VmRSS for process ${pid}`);
  return Number(kb) * 1024;
}

/** GoFlow2's Prometheus text page. */
export async function goflow2Metrics(port: number): Promise<string> {
  const res = await fetch(`http://127.0.0.1:${port}/metrics`, { signal: AbortSignal.timeout(5_000) });
  return res.text();
}

/** The sum of a metric's samples over every label set, in a Prometheus text page (0 when absent). */
export function metricSum(text: string, name: string): number {
  let sum = 0;
  for (const line of text.split('\n')) {
    if (line.startsWith(`${name}{`) || line.startsWith(`${name} `)) sum += Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return sum;
}

/** Datagrams GoFlow2 has finished with, decoded or refused, from its metrics page (its decoding-time summary counts each once). */
export function decodedDatagrams(page: string): number {
  return metricSum(page, 'goflow2_flow_decoding_time_seconds_count');
}
