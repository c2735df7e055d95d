import { ClassificationService, RulesInForceCache } from '../../application/enrichment/classification-service';
import { InterfaceEnrichment } from '../../application/enrichment/interface-enrichment';
import { InterfaceRows } from '../../application/enrichment/interface-rows';
import type { AuditLedger } from '../../application/audit-ledger';
import type { WithLock } from '../../application/exporter-service';
import { ExportersRepo } from '../../storage/exporters-repo';
import { ClassificationRulesRepo } from '../../storage/enrichment/classification-rules-repo';
import { InterfacesRepo } from '../../storage/enrichment/interfaces-repo';
import { SnmpPoller } from '../../workers/enrichment/snmp-poller';
import type { Config } from '../config';
import type { Adapters } from './adapters';

/** The interface rows, over the workspace's classification rules in force (read through `classification`). */
function interfaceRowsOf(config: Config, a: Adapters, repo: InterfacesRepo, rules: RulesInForceCache) {
  return new InterfaceRows({
    repo,
    exporters: new ExportersRepo(a.clickhouse),
    rulesOf: (orgId) => rules.inForce(orgId),
    sealing: { current: config.webhooks.secretsKey, previous: config.webhooks.previousSecretsKeys },
  });
}

/** The API's enrichment services: exporters' SNMP settings and interfaces, and the classification rules. */
export function enrichmentServices(config: Config, a: Adapters, audit: AuditLedger, withLock: WithLock) {
  const repo = new InterfacesRepo(a.clickhouse);
  const exporters = new ExportersRepo(a.clickhouse);
  const rulesRepo = new ClassificationRulesRepo(a.clickhouse);
  const cache = new RulesInForceCache(rulesRepo);
  const rows = interfaceRowsOf(config, a, repo, cache);
  // A change of rules classifies the workspace's interfaces again at once, so flows read afterwards see it.
  const classification = new ClassificationService({
    repo: rulesRepo, cache, audit, withLock, onChange: (orgId) => rows.reclassify(orgId),
  });
  return {
    interfaceEnrichment: new InterfaceEnrichment({ repo, exporters, rows, audit, withLock, sealing: { current: config.webhooks.secretsKey } }),
    classification,
    failingAgents: (limit: number) => repo.failingAgents(limit),
  };
}

/** The SNMP poller of the stream-workers role. */
export function snmpPollerOf(config: Config, a: Adapters): SnmpPoller {
  const repo = new InterfacesRepo(a.clickhouse);
  const rows = interfaceRowsOf(config, a, repo, new RulesInForceCache(new ClassificationRulesRepo(a.clickhouse)));
  return new SnmpPoller(config.snmpPoller, { enrichment: rows, repo, exporters: new ExportersRepo(a.clickhouse), registry: a.registry, log: a.log });
}
