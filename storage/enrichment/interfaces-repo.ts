import type { ExporterClass } from '../../core/enrichment/classifier';
import type { ExporterSnmp, InterfaceRecord } from '../../core/enrichment/interfaces';
import type { ClickHouse } from '../clickhouse';
import { int, str } from '../sql';

/** How an exporter's agent last answered. */
export interface AgentStatus {
  org_id: string;
  exporter_id: string;
  address: string;
  last_attempt: number;
  /** 0: never answered. */
  last_success: number;
  /** When the agent stopped answering, 0 while it answers. */
  failing_since: number;
  error: string;
  interfaces: number;
}

export interface ExporterClassRow extends ExporterClass {
  exporter_name: string;
  rules_version: number;
}

const ifColumns = 'if_index, name, description, speed, source, boundary, connectivity, provider, rules_version';

/**
 * The interface and classification tables (storage/enrichment/migrations.ts):
 * every write is a new version of its row, read back with FINAL. Versions are
 * write times in milliseconds, made strictly increasing within this process.
 */
export class InterfacesRepo {
  private lastVersion = 0;

  constructor(private readonly ch: ClickHouse) {}

  private get db(): string {
    return this.ch.database;
  }

  private nextVersion(): number {
    this.lastVersion = Math.max(Date.now(), this.lastVersion + 1);
    return this.lastVersion;
  }

  async interfaces(orgId: string, exporter: string): Promise<InterfaceRecord[]> {
    const rows = await this.ch.query<Record<string, unknown>>(
      `SELECT ${ifColumns} FROM ${this.db}.exporter_interfaces FINAL
       WHERE org_id = ${str(orgId)} AND exporter = ${str(exporter)} ORDER BY if_index`,
    );
    return rows.map((r) => ({
      index: Number(r.if_index),
      name: String(r.name),
      description: String(r.description),
      speed: Number(r.speed),
      source: r.source === 'static' ? 'static' : 'snmp',
      boundary: String(r.boundary),
      connectivity: String(r.connectivity),
      provider: String(r.provider),
      rules_version: Number(r.rules_version),
    }));
  }

  async putInterfaces(orgId: string, exporter: string, records: readonly InterfaceRecord[]): Promise<void> {
    if (records.length === 0) return;
    const version = this.nextVersion();
    const lines = records.map((r) =>
      JSON.stringify({
        org_id: orgId, exporter, if_index: r.index, name: r.name, description: r.description, speed: r.speed, source: r.source,
        boundary: r.boundary, connectivity: r.connectivity, provider: r.provider, rules_version: r.rules_version, updated_at: version, version,
      }),
    );
    await this.ch.insertJsonEachRow('exporter_interfaces', lines.join('\n') + '\n');
  }

  async exporterClass(orgId: string, exporter: string): Promise<ExporterClassRow | undefined> {
    const rows = await this.ch.query<Record<string, unknown>>(
      `SELECT exporter_name, exporter_group, exporter_role, exporter_site, exporter_region, rules_version
       FROM ${this.db}.exporter_classes FINAL WHERE org_id = ${str(orgId)} AND exporter = ${str(exporter)}`,
    );
    const r = rows[0];
    if (!r) return undefined;
    const row: ExporterClassRow = { exporter_name: String(r.exporter_name), rules_version: Number(r.rules_version) };
    // Empty columns are fields no rule decided: absent, as the classifier leaves them.
    if (String(r.exporter_group)) row.group = String(r.exporter_group);
    if (String(r.exporter_role)) row.role = String(r.exporter_role);
    if (String(r.exporter_site)) row.site = String(r.exporter_site);
    if (String(r.exporter_region)) row.region = String(r.exporter_region);
    return row;
  }

  async putExporterClass(orgId: string, exporter: string, row: ExporterClassRow): Promise<void> {
    const version = this.nextVersion();
    const line = {
      org_id: orgId, exporter, exporter_name: row.exporter_name, exporter_group: row.group ?? '', exporter_role: row.role ?? '',
      exporter_site: row.site ?? '', exporter_region: row.region ?? '', rules_version: row.rules_version, updated_at: version, version,
    };
    await this.ch.insertJsonEachRow('exporter_classes', JSON.stringify(line) + '\n');
  }

  async settings(orgId: string, exporterId: string): Promise<ExporterSnmp | undefined> {
    const rows = await this.ch.query<Record<string, unknown>>(
      `SELECT org_id, exporter_id, snmp, interfaces, updated_at, actor, version FROM ${this.db}.exporter_snmp FINAL
       WHERE org_id = ${str(orgId)} AND exporter_id = ${str(exporterId)}`,
    );
    return rows[0] ? settingsOf(rows[0]) : undefined;
  }

  /** Every exporter's settings that name an agent, in every workspace: what the poller asks. */
  async polled(): Promise<ExporterSnmp[]> {
    const rows = await this.ch.query<Record<string, unknown>>(
      `SELECT * FROM (SELECT org_id, exporter_id, snmp, interfaces, updated_at, actor, version FROM ${this.db}.exporter_snmp FINAL)
       WHERE snmp != ''`,
    );
    return rows.map(settingsOf);
  }

  async putSettings(s: ExporterSnmp): Promise<void> {
    const row = {
      org_id: s.org_id, exporter_id: s.exporter_id, snmp: s.snmp ? JSON.stringify(s.snmp) : '', interfaces: JSON.stringify(s.interfaces),
      updated_at: s.updated_at, actor: s.actor, version: s.version,
    };
    await this.ch.insertJsonEachRow('exporter_snmp', JSON.stringify(row) + '\n');
  }

  async putAgentStatus(status: AgentStatus): Promise<void> {
    await this.ch.insertJsonEachRow('snmp_agents', JSON.stringify({ ...status, version: this.nextVersion() }) + '\n');
  }

  async agentStatus(orgId: string, exporterId: string): Promise<AgentStatus | undefined> {
    const rows = await this.ch.query<Record<string, unknown>>(
      `SELECT org_id, exporter_id, address, last_attempt, last_success, failing_since, error, interfaces FROM ${this.db}.snmp_agents FINAL
       WHERE org_id = ${str(orgId)} AND exporter_id = ${str(exporterId)}`,
    );
    return rows[0] ? statusOf(rows[0]) : undefined;
  }

  /** Agents of every workspace that do not answer now, failing the longest first: for /healthz. */
  async failingAgents(limit: number): Promise<AgentStatus[]> {
    const rows = await this.ch.query<Record<string, unknown>>(
      `SELECT * FROM (SELECT org_id, exporter_id, address, last_attempt, last_success, failing_since, error, interfaces FROM ${this.db}.snmp_agents FINAL)
       WHERE failing_since > 0 ORDER BY failing_since, exporter_id LIMIT ${int(limit)}`,
    );
    return rows.map(statusOf);
  }
}

function statusOf(r: Record<string, unknown>): AgentStatus {
  return {
    org_id: String(r.org_id), exporter_id: String(r.exporter_id), address: String(r.address), last_attempt: Number(r.last_attempt),
    last_success: Number(r.last_success), failing_since: Number(r.failing_since), error: String(r.error), interfaces: Number(r.interfaces),
  };
}

function settingsOf(r: Record<string, unknown>): ExporterSnmp {
  const snmp = String(r.snmp);
  return {
    org_id: String(r.org_id),
    exporter_id: String(r.exporter_id),
    snmp: snmp ? (JSON.parse(snmp) as ExporterSnmp['snmp']) : null,
    interfaces: JSON.parse(String(r.interfaces) || '[]') as ExporterSnmp['interfaces'],
    updated_at: Number(r.updated_at),
    actor: String(r.actor),
    version: Number(r.version),
  };
}
