import { canonicalJson } from '../../core/canonical-json';
import { classifyExporter, classifyInterface, type InterfaceAttributes } from '../../core/enrichment/classifier';
import { mergeInterfaces, type ExporterSnmp, type InterfaceRecord, type SnmpSettings } from '../../core/enrichment/interfaces';
import type { Rule } from '../../core/enrichment/rules';
import type { Exporter } from '../../core/exporter';
import { open, type SecretOwner } from '../../core/secret-box';
import type { ExportersRepo } from '../../storage/exporters-repo';
import type { InterfacesRepo } from '../../storage/enrichment/interfaces-repo';

/** The rules in force for a workspace, parsed: what classification reads. */
export interface RulesInForce {
  version: number;
  rules: readonly Rule[];
}

/** Secrets are bound to the exporter and to their use, so a sealed community copied onto a webhook opens nothing. */
export const ownerOf = (orgId: string, exporterId: string): SecretOwner => ({ orgId, id: `${exporterId}/snmp` });

export const emptySettings = (orgId: string, exporterId: string): ExporterSnmp => ({
  org_id: orgId, exporter_id: exporterId, snmp: null, interfaces: [], updated_at: 0, actor: '', version: 0,
});

/**
 * The interface rows flows are joined with when read: written from what an
 * agent gave and the exporter's static interfaces (which win), each
 * classified by the workspace's rules in force. Used by the API (a change
 * of static interfaces or of rules) and by the SNMP poller.
 */
export class InterfaceRows {
  constructor(
    private readonly deps: {
      repo: InterfacesRepo;
      exporters: Pick<ExportersRepo, 'list'>;
      /** The classification rules in force of a workspace. */
      rulesOf(orgId: string): Promise<RulesInForce>;
      /** The key SNMP secrets were sealed with (WEBHOOK_SECRETS_KEY), and the keys of before a rotation. */
      sealing: { current?: string; previous?: readonly string[] };
    },
  ) {}

  /** The agent's settings with their secrets, for the poller only. */
  credentials(s: ExporterSnmp): SnmpSettings | undefined {
    if (!s.snmp) return undefined;
    const { current, previous } = this.deps.sealing;
    const keys = current ? { current, previous } : undefined;
    const secrets = JSON.parse(open(s.snmp.sealed, keys, ownerOf(s.org_id, s.exporter_id))) as Record<string, string>;
    const settings: Record<string, unknown> = { ...s.snmp, ...secrets };
    delete settings.sealed;
    return settings as SnmpSettings;
  }

  /**
   * Writes an exporter's interface rows from what its agent gave (`polled`)
   * and its static interfaces, classified by the rules in force, and its
   * class row; only rows that changed get a new version.
   */
  async store(exporter: Exporter, settings: ExporterSnmp, polled: readonly InterfaceAttributes[]): Promise<number> {
    const { version, rules } = await this.deps.rulesOf(exporter.org_id);
    const attrs = { name: exporter.name, address: exporter.address };
    const stored = new Map((await this.deps.repo.interfaces(exporter.org_id, exporter.address)).map((r) => [r.index, r]));
    const rows: InterfaceRecord[] = mergeInterfaces(polled, settings.interfaces).map((i) => {
      const c = classifyInterface(rules, attrs, i);
      return { ...i, boundary: c.boundary ?? '', connectivity: c.connectivity ?? '', provider: c.provider ?? '', rules_version: version };
    });
    const changed = rows.filter((r) => canonicalJson(r) !== canonicalJson(stored.get(r.index) ?? null));
    await this.deps.repo.putInterfaces(exporter.org_id, exporter.address, changed);
    const cls = { exporter_name: exporter.name, rules_version: version, ...classifyExporter(rules, attrs) };
    const before = await this.deps.repo.exporterClass(exporter.org_id, exporter.address);
    if (canonicalJson(before ?? null) !== canonicalJson(cls)) await this.deps.repo.putExporterClass(exporter.org_id, exporter.address, cls);
    return changed.length;
  }

  /** Classifies every active exporter of the workspace again (after its rules changed), from the rows stored. */
  async reclassify(orgId: string): Promise<void> {
    const exporters = await this.deps.exporters.list(orgId, { status: 'active', limit: 100_000 });
    for (const exporter of exporters) {
      const settings = (await this.deps.repo.settings(orgId, exporter.id)) ?? emptySettings(orgId, exporter.id);
      const stored = await this.deps.repo.interfaces(orgId, exporter.address);
      const statics = new Set(settings.interfaces.map((i) => i.index));
      await this.store(exporter, settings, stored.filter((i) => i.source === 'snmp' && !statics.has(i.index)));
    }
  }
}
