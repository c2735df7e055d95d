/**
 * What GoFlow2 counts on its Prometheus endpoint that the collector needs:
 * datagrams per exporter address, and the datagrams it could not decode.
 * Counters are totals since GoFlow2 started; CounterDeltas turns successive
 * readings into increments (a restart resets them to zero).
 */
export interface GoFlow2Counters {
  /** Datagrams received, by source address (GoFlow2's flow_traffic_packets_total). */
  datagramsBy: Map<string, number>;
  /** Datagrams GoFlow2 failed to decode (garbage, truncated, unknown version). */
  decodeErrors: number;
  /** Data sets whose template GoFlow2 does not know (yet): their flows are lost. */
  unknownTemplates: number;
  /** Datagrams dropped because GoFlow2's queue was full. */
  queueDrops: number;
  /** Templates received: a flood of them shows here. */
  templates: number;
  /** sFlow datagrams whose agent address is not their UDP source: their flows go by the source. */
  sflowAgentMismatches: number;
}

const sample = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)/;
const labelPair = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g;

function labelsOf(text: string | undefined): Record<string, string> {
  const labels: Record<string, string> = {};
  if (text) for (const m of text.matchAll(labelPair)) labels[m[1]!] = m[2]!;
  return labels;
}

/** The counters above from GoFlow2's Prometheus text exposition. */
export function parseGoFlow2Metrics(text: string): GoFlow2Counters {
  const counters: GoFlow2Counters = { datagramsBy: new Map(), decodeErrors: 0, unknownTemplates: 0, queueDrops: 0, templates: 0, sflowAgentMismatches: 0 };
  for (const line of text.split('\n')) {
    const m = sample.exec(line);
    if (!m || line.startsWith('#')) continue;
    const value = Number(m[3]);
    if (!Number.isFinite(value)) continue;
    const labels = labelsOf(m[2]);
    switch (m[1]) {
      case 'goflow2_flow_traffic_packets_total': {
        const remote = labels.remote_ip ?? '';
        counters.datagramsBy.set(remote, (counters.datagramsBy.get(remote) ?? 0) + value);
        break;
      }
      case 'goflow2_flow_decoder_error_total':
        counters.decodeErrors += value;
        break;
      case 'goflow2_flow_process_nf_errors_total':
        if (labels.error === 'template_not_found') counters.unknownTemplates += value;
        break;
      case 'goflow2_flow_dropped_packets_total':
        counters.queueDrops += value;
        break;
      case 'goflow2_flow_process_nf_templates_total':
        counters.templates += value;
        break;
      case 'goflow2_flow_process_sf_agent_mismatch_total':
        counters.sflowAgentMismatches += value;
        break;
    }
  }
  return counters;
}

/** Increments between readings of monotonic counters; a smaller reading means the counter restarted from zero. */
export class CounterDeltas {
  private readonly last = new Map<string, number>();

  delta(key: string, value: number): number {
    const previous = this.last.get(key) ?? 0;
    this.last.set(key, value);
    return value >= previous ? value - previous : value;
  }

  /**
   * Forgets the keys of this prefix not read this time: GoFlow2 (nettel3)
   * evicts routers past its bound and their series leave its exposition, so
   * what is remembered stays as bounded as what it shows. A router that comes
   * back starts its counter from zero again, and counts from zero here.
   */
  keepOnly(prefix: string, read: ReadonlySet<string>): void {
    for (const key of this.last.keys()) if (key.startsWith(prefix) && !read.has(key)) this.last.delete(key);
  }

  /** How many readings are remembered. */
  get size(): number {
    return this.last.size;
  }

  /** Forget every reading: the next ones count from zero (after a GoFlow2 restart). */
  reset(): void {
    this.last.clear();
  }
}
