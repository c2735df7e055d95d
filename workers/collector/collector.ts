import type { FlowEnricher } from '../../application/enrichment/address-enrichment';
import { flowRowJson } from '../../core/flow';
import { addressText, toFlowInput } from '../../core/flow-message';
import type { Logger } from '../../observability/logger';
import type { Registry } from '../../observability/metrics';
import { CollectedBatches, type BatchPublisher, type CollectedBatchesConfig } from './collected-batches';
import { collectorGauges, collectorMetrics } from './collector-metrics';
import { ExporterDirectory, type ExporterSource } from './exporter-directory';
import { decodeFlowMessage, FlowMessageFramer } from './flow-message-decoder';
import { EngineSupervisor, type SupervisionConfig } from '../../engines/supervisor';
import { GoFlow2Process, type GoFlow2Config } from './goflow2-process';
import { GoFlow2Scraper } from './goflow2-scraper';
import { UnknownExporterCounts, type UnknownExporterSink } from './unknown-exporter-counts';

export interface CollectorConfig {
  goflow2: GoFlow2Config;
  /** How often the registry is read again: a registration reaches the collector within this. */
  registryRefreshMs: number;
  /** How often GoFlow2's counters are read and unknown exporters' counts written. */
  countersIntervalMs: number;
  batches: CollectedBatchesConfig;
  /** How GoFlow2 is kept running: the same supervision as the embedded engines. */
  supervision: SupervisionConfig;
}

export const defaultCollectorTuning = {
  registryRefreshMs: 2_000,
  countersIntervalMs: 2_000,
  batches: { maxFlows: 2_000, maxWaitMs: 100, maxInFlight: 64, retryDelayMs: 1_000 },
};

/**
 * The collector role: GoFlow2 decodes NetFlow v5/v9, IPFIX and sFlow on the
 * UDP ports; each decoded flow is routed by its exporter's address to the
 * workspace that registered it, stamped, and published to the telemetry
 * stream like an HTTP flow. Flows of unregistered exporters are counted per
 * address, never stored.
 */
export class Collector {
  private readonly metrics;
  private readonly directory: ExporterDirectory;
  private readonly unknown: UnknownExporterCounts;
  private readonly batches: CollectedBatches;
  private readonly goflow2: GoFlow2Process;
  private readonly supervisor: EngineSupervisor;
  private readonly scraper: GoFlow2Scraper;
  private framer = new FlowMessageFramer();
  lastFlowAt = 0;

  constructor(
    private readonly config: CollectorConfig,
    private readonly deps: { publisher: BatchPublisher; exporters: ExporterSource & UnknownExporterSink; enricher?: FlowEnricher; registry: Registry; log: Logger },
  ) {
    const log = deps.log.child({ component: 'collector' });
    this.metrics = collectorMetrics(deps.registry);
    this.directory = new ExporterDirectory({ refreshMs: config.registryRefreshMs }, { exporters: deps.exporters, log });
    this.unknown = new UnknownExporterCounts({ flushMs: config.countersIntervalMs }, { sink: deps.exporters, log, aggregated: this.metrics.unknownAggregated });
    this.batches = new CollectedBatches(config.batches, {
      publisher: deps.publisher,
      metrics: this.metrics,
      log,
      onPressure: (paused) => (paused ? this.goflow2.pause() : this.goflow2.resume()),
    });
    this.goflow2 = new GoFlow2Process(
      config.goflow2,
      {
        onRun: () => {
          this.framer = new FlowMessageFramer();
          this.scraper.reset();
        },
        onChunk: (chunk) => this.onChunk(chunk),
      },
      log,
    );
    this.supervisor = new EngineSupervisor(this.goflow2, config.supervision, {
      log,
      registry: deps.registry,
      onRestart: () => this.metrics.restarts.inc(),
    });
    this.scraper = new GoFlow2Scraper(
      { port: () => this.goflow2.metricsPort, intervalMs: config.countersIntervalMs },
      { metrics: this.metrics, isRegistered: (address) => this.directory.route(address) !== undefined, unknown: this.unknown, log },
    );
    collectorGauges(deps.registry, {
      up: () => (this.goflow2.running ? 1 : 0),
      exporters: () => this.directory.size,
      paused: () => (this.batches.paused ? 1 : 0),
    });
  }

  async start(): Promise<void> {
    await this.directory.start();
    await this.unknown.start();
    await this.supervisor.start();
    this.scraper.start();
  }

  async stop(): Promise<void> {
    await this.scraper.stop();
    await this.supervisor.stop();
    await this.batches.drain(10_000);
    await this.unknown.stop();
    await this.directory.stop();
  }

  /** Whether the collector's copy of the registry routes this (normalized) address to a workspace. */
  routes(address: string): boolean {
    return this.directory.route(address) !== undefined;
  }

  /** GoFlow2's process id while it runs. */
  get goflow2Pid(): number | undefined {
    return this.goflow2.pid;
  }

  /** For /healthz: up while GoFlow2 runs with its listeners bound; says what it listens on and what it has seen. */
  async probe(): Promise<{ detail: string }> {
    const c = this.config.goflow2;
    await this.supervisor.probe();
    if (!this.goflow2.running) {
      throw new Error(`GoFlow2 is not running (last exit: ${this.goflow2.lastExit ?? 'none'}, restarts: ${this.supervisor.restarts})`);
    }
    if (!(await this.goflow2.listening())) throw new Error('GoFlow2 is starting: its UDP listeners are not bound yet');
    const lastFlow = this.lastFlowAt ? new Date(this.lastFlowAt).toISOString() : 'never';
    return {
      detail:
        `netflow/ipfix udp ${c.host}:${c.netflowPort}, sflow udp ${c.host}:${c.sflowPort}; ` +
        `${this.directory.size} exporters registered; last flow ${lastFlow}; goflow2 restarts ${this.supervisor.restarts}`,
    };
  }

  private onChunk(chunk: Buffer): void {
    try {
      this.framer.push(chunk, (message) => this.onMessage(message));
    } catch (err) {
      // The stream lost its framing: only a fresh GoFlow2 output can be read again.
      this.metrics.droppedFlows.inc({ reason: 'malformed_message' });
      this.deps.log.error({ err }, 'GoFlow2 output unreadable; restarting GoFlow2');
      this.goflow2.kill();
    }
  }

  private onMessage(message: Buffer): void {
    let flow;
    try {
      flow = decodeFlowMessage(message);
    } catch {
      this.metrics.droppedFlows.inc({ reason: 'malformed_message' });
      return;
    }
    const exporter = addressText(flow.samplerAddress) ?? '';
    const route = this.directory.route(exporter);
    if (!route) {
      this.metrics.droppedFlows.inc({ reason: 'unregistered_exporter' });
      if (exporter) this.unknown.add(exporter, 0, 1);
      return;
    }
    const input = toFlowInput(flow, exporter, route.samplingRate);
    if (typeof input === 'string') {
      this.metrics.droppedFlows.inc({ reason: input });
      return;
    }
    const receivedAt = Date.now();
    this.lastFlowAt = receivedAt;
    // Enriched first: it fills the AS numbers the exporter did not send into the flow itself.
    const tail = this.deps.enricher?.tailOf(route.orgId, input);
    this.batches.add(route.orgId, exporter, (eventId) =>
      flowRowJson(input, { org_id: route.orgId, event_id: eventId, ts: input.timestamp ?? receivedAt, received_at: receivedAt }, tail),
    );
  }
}
