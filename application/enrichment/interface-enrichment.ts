import type { InterfaceAttributes } from '../../core/enrichment/classifier';
import { publicPart, secretPart, type ExporterSnmp, type InterfaceRecord, type SnmpSettings } from '../../core/enrichment/interfaces';
import { conflict, notFound } from '../../core/errors';
import type { Exporter } from '../../core/exporter';
import { seal, type SealingKeys } from '../../core/secret-box';
import type { ExportersRepo } from '../../storage/exporters-repo';
import type { AgentStatus, InterfacesRepo } from '../../storage/enrichment/interfaces-repo';
import type { AuditLedger } from '../audit-ledger';
import type { WithLock } from '../exporter-service';
import { emptySettings as empty, ownerOf, type InterfaceRows } from './interface-rows';

export interface InterfaceEnrichmentDeps {
  repo: InterfacesRepo;
  exporters: ExportersRepo;
  rows: InterfaceRows;
  audit: AuditLedger;
  withLock: WithLock;
  /** The key SNMP secrets are sealed with (WEBHOOK_SECRETS_KEY). */
  sealing: { current?: string };
  now?: () => number;
}

/**
 * An exporter's enrichment settings: its agent's settings (secrets sealed
 * like webhook secrets, never answered) and its static interfaces (which win
 * over the agent's); a change of static interfaces rewrites its interface
 * rows at once (application/enrichment/interface-rows.ts).
 */
export class InterfaceEnrichment {
  constructor(private readonly deps: InterfaceEnrichmentDeps) {}

  private now(): number {
    return (this.deps.now ?? Date.now)();
  }

  private keys(): SealingKeys {
    const current = this.deps.sealing.current;
    // The start generates one on the embedded default and requires one otherwise: its absence is a wiring fault.
    if (!current) throw new Error('SNMP credentials need WEBHOOK_SECRETS_KEY to be sealed');
    return { current };
  }

  private async exporter(orgId: string, exporterId: string): Promise<Exporter> {
    const exporter = await this.deps.exporters.get(orgId, exporterId);
    if (!exporter || exporter.status === 'deleted' || exporter.status === 'rejected') throw notFound('exporter');
    return exporter;
  }

  async settings(orgId: string, exporterId: string): Promise<{ settings: ExporterSnmp; agent?: AgentStatus }> {
    await this.exporter(orgId, exporterId);
    const settings = (await this.deps.repo.settings(orgId, exporterId)) ?? empty(orgId, exporterId);
    return { settings, agent: await this.deps.repo.agentStatus(orgId, exporterId) };
  }

  /** Sets (or with null removes) how the exporter's agent is polled; audited without its secrets. */
  putSnmp(orgId: string, actor: string, exporterId: string, snmp: SnmpSettings | null): Promise<ExporterSnmp> {
    const sealed = snmp && { ...publicPart(snmp), sealed: seal(JSON.stringify(secretPart(snmp)), this.keys(), ownerOf(orgId, exporterId)) };
    return this.change(orgId, actor, exporterId, 'exporter.snmp.update', (s) => ({ ...s, snmp: sealed }), { snmp: snmp && publicPart(snmp) });
  }

  /** Sets the exporter's static interfaces, then writes its interface rows at once. */
  interfaces(orgId: string, exporter: Exporter): Promise<InterfaceRecord[]> {
    return this.deps.repo.interfaces(orgId, exporter.address);
  }

  async putInterfaces(orgId: string, actor: string, exporterId: string, interfaces: InterfaceAttributes[]): Promise<ExporterSnmp> {
    const written = await this.change(orgId, actor, exporterId, 'exporter.interfaces.update', (s) => ({ ...s, interfaces }), { interfaces: interfaces.length });
    const exporter = await this.exporter(orgId, exporterId);
    const polled = (await this.deps.repo.interfaces(orgId, exporter.address)).filter((i) => i.source === 'snmp');
    await this.deps.rows.store(exporter, written, polled);
    return written;
  }

  private async change(
    orgId: string, actor: string, exporterId: string, action: string,
    edit: (s: ExporterSnmp) => ExporterSnmp, details: Record<string, unknown>,
  ): Promise<ExporterSnmp> {
    await this.exporter(orgId, exporterId);
    const written = await this.deps.withLock(`exporter-snmp-${orgId}-${exporterId}`, async () => {
      const current = (await this.deps.repo.settings(orgId, exporterId)) ?? empty(orgId, exporterId);
      const next = { ...edit(current), updated_at: this.now(), actor, version: current.version + 1 };
      if (next.version <= current.version) throw conflict('the exporter settings changed meanwhile');
      await this.deps.repo.putSettings(next);
      return next;
    });
    await this.deps.audit.append({ orgId, actor, action, target: exporterId, details: { version: written.version, ...details } });
    return written;
  }
}
