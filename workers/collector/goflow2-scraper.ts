import type { Logger } from '../../observability/logger';
import type { CollectorMetrics } from './collector-metrics';
import { CounterDeltas, parseGoFlow2Metrics } from './goflow2-counters';
import type { UnknownExporterCounts } from './unknown-exporter-counts';

/**
 * Reads GoFlow2's Prometheus endpoint every `intervalMs` and carries its
 * increments into the collector's own counters: datagrams received,
 * datagrams it could not decode by reason, templates, sFlow datagrams whose
 * agent is not their source, and the datagrams of each unregistered address
 * (for the admin's list of unknown exporters).
 */
export class GoFlow2Scraper {
  private readonly deltas = new CounterDeltas();
  private timer?: NodeJS.Timeout;
  private running?: Promise<void>;

  constructor(
    private readonly config: { port: () => number; intervalMs: number },
    private readonly deps: {
      metrics: CollectorMetrics;
      isRegistered(address: string): boolean;
      unknown: Pick<UnknownExporterCounts, 'add'>;
      log: Logger;
    },
  ) {}

  start(): void {
    this.timer = setInterval(() => {
      this.running ??= this.scrape().finally(() => (this.running = undefined));
    }, this.config.intervalMs);
  }

  /** GoFlow2 started again: its counters start from zero. */
  reset(): void {
    this.deltas.reset();
  }

  async scrape(): Promise<void> {
    let text: string;
    try {
      const res = await fetch(`http://127.0.0.1:${this.config.port()}/metrics`, { signal: AbortSignal.timeout(2_000) });
      text = await res.text();
    } catch (err) {
      this.deps.log.debug({ err }, 'GoFlow2 metrics not readable (it may be restarting)');
      return;
    }
    this.record(text);
  }

  private record(text: string): void {
    const c = parseGoFlow2Metrics(text);
    const { metrics, unknown } = this.deps;
    const read = new Set<string>();
    for (const [address, total] of c.datagramsBy) {
      read.add(`datagrams|${address}`);
      const datagrams = this.deltas.delta(`datagrams|${address}`, total);
      if (datagrams === 0) continue;
      metrics.datagrams.inc(datagrams);
      if (!this.deps.isRegistered(address)) {
        metrics.droppedDatagrams.inc({ reason: 'unregistered_exporter' }, datagrams);
        unknown.add(address, datagrams, 0);
      }
    }
    this.deltas.keepOnly('datagrams|', read);
    metrics.droppedDatagrams.inc({ reason: 'decode_error' }, this.deltas.delta('decode_error', c.decodeErrors));
    metrics.droppedDatagrams.inc({ reason: 'unknown_template' }, this.deltas.delta('unknown_template', c.unknownTemplates));
    metrics.droppedDatagrams.inc({ reason: 'queue_full' }, this.deltas.delta('queue_full', c.queueDrops));
    metrics.templates.inc(this.deltas.delta('templates', c.templates));
    metrics.sflowAgentMismatches.inc(this.deltas.delta('sflow_agent_mismatch', c.sflowAgentMismatches));
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.running;
    // One last reading, so counts of the final seconds are not lost.
    await this.scrape();
  }
}
