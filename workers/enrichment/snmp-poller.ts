import type { InterfaceRows } from '../../application/enrichment/interface-rows';
import type { InterfaceAttributes } from '../../core/enrichment/classifier';
import type { ExporterSnmp, SnmpSettings } from '../../core/enrichment/interfaces';
import type { Exporter } from '../../core/exporter';
import { PeriodicRound } from '../../core/periodic-round';
import type { Logger } from '../../observability/logger';
import type { Registry } from '../../observability/metrics';
import type { ExportersRepo } from '../../storage/exporters-repo';
import type { AgentStatus, InterfacesRepo } from '../../storage/enrichment/interfaces-repo';
import { pollInterfaces, type SnmpTiming } from './snmp-client';
import { snmpPollerMetrics } from './snmp-metrics';

export interface SnmpPollerConfig extends SnmpTiming {
  /** How often every agent is asked. */
  refreshMs: number;
  /** Agents asked at once. */
  concurrency: number;
}

export const defaultSnmpPollerConfig: SnmpPollerConfig = { refreshMs: 300_000, timeoutMs: 2_000, retries: 1, concurrency: 8 };

export type PollInterfaces = (address: string, settings: SnmpSettings, timing: SnmpTiming) => Promise<InterfaceAttributes[]>;

/**
 * Asks the SNMP agent of every active exporter that has one for its
 * interfaces, every `refreshMs`, and writes what changed (with the
 * exporter's static interfaces over them, classified) through the
 * interface enrichment. An agent that stops answering keeps its last known
 * interfaces; it is recorded as failing (snmp_agents, which /healthz and the
 * exporter's API read), logged once when it starts failing, and counted.
 */
export class SnmpPoller {
  private readonly round: PeriodicRound;
  private readonly metrics;
  /** Agents failing at the end of the last poll of each, by workspace and exporter id. */
  private readonly failing = new Set<string>();

  constructor(
    private readonly config: SnmpPollerConfig,
    private readonly deps: {
      enrichment: InterfaceRows;
      repo: InterfacesRepo;
      exporters: Pick<ExportersRepo, 'allActive'>;
      registry: Registry;
      log: Logger;
      poll?: PollInterfaces;
      now?: () => number;
    },
  ) {
    this.metrics = snmpPollerMetrics(deps.registry);
    this.round = new PeriodicRound(config.refreshMs, () => this.pollAll());
  }

  private now(): number {
    return (this.deps.now ?? Date.now)();
  }

  start(): Promise<void> {
    this.round.start({ now: true });
    return Promise.resolve();
  }

  stop(): Promise<void> {
    return this.round.stop();
  }

  /** A round that starts after this call (tests, and a change of an exporter's agent settings). */
  pollNow(): Promise<void> {
    return this.round.runFresh();
  }

  private async pollAll(): Promise<void> {
    try {
      const active = new Map((await this.deps.exporters.allActive()).map((e) => [`${e.org_id}/${e.id}`, e]));
      const due = (await this.deps.repo.polled()).flatMap((s) => {
        const exporter = active.get(`${s.org_id}/${s.exporter_id}`);
        return exporter ? [{ exporter, settings: s }] : [];
      });
      let next = 0;
      const lane = async () => {
        while (next < due.length) {
          const job = due[next++]!;
          await this.pollOne(job.exporter, job.settings);
        }
      };
      await Promise.all(Array.from({ length: Math.min(this.config.concurrency, due.length) }, lane));
    } catch (err) {
      this.metrics.roundErrors.inc();
      this.deps.log.error({ err }, 'snmp poll round failed');
    }
    this.metrics.failingAgents.set(this.failing.size);
  }

  private async pollOne(exporter: Exporter, settings: ExporterSnmp): Promise<void> {
    const key = `${exporter.org_id}/${exporter.id}`;
    const before = await this.deps.repo.agentStatus(exporter.org_id, exporter.id);
    const at = this.now();
    let credentials: SnmpSettings | undefined;
    try {
      credentials = this.deps.enrichment.credentials(settings);
    } catch (err) {
      this.metrics.polls.inc({ result: 'unsealable' });
      return this.recordFailure(key, exporter, before, at, `the credentials do not open: ${(err as Error).message}`);
    }
    if (!credentials) return;
    let polled: InterfaceAttributes[];
    try {
      polled = await (this.deps.poll ?? pollInterfaces)(exporter.address, credentials, this.config);
    } catch (err) {
      this.metrics.polls.inc({ result: 'failed' });
      return this.recordFailure(key, exporter, before, at, (err as Error).message);
    }
    this.metrics.polls.inc({ result: 'ok' });
    this.metrics.interfacesWritten.inc(await this.deps.enrichment.store(exporter, settings, polled));
    if (this.failing.delete(key) || before?.failing_since) this.deps.log.info({ org_id: exporter.org_id, exporter_id: exporter.id }, 'snmp agent answers again');
    await this.deps.repo.putAgentStatus({ ...statusBase(exporter, at), last_success: at, failing_since: 0, error: '', interfaces: polled.length });
  }

  /** The agent keeps its last known interfaces; its status says since when it fails and why. */
  private async recordFailure(key: string, exporter: Exporter, before: AgentStatus | undefined, at: number, error: string): Promise<void> {
    if (!this.failing.has(key) && !before?.failing_since) this.deps.log.warn({ org_id: exporter.org_id, exporter_id: exporter.id, error }, 'snmp agent stopped answering');
    this.failing.add(key);
    await this.deps.repo.putAgentStatus({
      ...statusBase(exporter, at),
      last_success: before?.last_success ?? 0,
      failing_since: before?.failing_since || at,
      error: error.slice(0, 500),
      interfaces: before?.interfaces ?? 0,
    });
  }
}

const statusBase = (exporter: Exporter, at: number) => ({ org_id: exporter.org_id, exporter_id: exporter.id, address: exporter.address, last_attempt: at });
