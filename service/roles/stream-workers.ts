import { Correlator } from '../../application/correlator';
import { AuditLedger } from '../../application/audit-ledger';
import { KnownWorkspaces, defaultKnownWorkspacesConfig } from '../../application/known-workspaces';
import { QuietResolutions } from '../../application/quiet-resolutions';
import { AuditRepo } from '../../storage/audit-repo';
import { AuditHeads } from '../../streams/audit-heads';
import { KeysRepo } from '../../storage/keys-repo';
import { AttackWindowsRepo } from '../../storage/attack-windows-repo';
import { DetectionFeed } from '../../streams/detection-feed';
import { DetectionWorker, defaultDetectionWorkerConfig } from '../../workers/detection/detection-worker';
import { IncidentsRepo } from '../../storage/incidents-repo';
import { SignalRuns } from '../../storage/signal-runs';
import { TelemetryStore } from '../../storage/telemetry-store';
import { WebhooksRepo } from '../../storage/webhooks-repo';
import { AutomationTriggers, bothOutboxes } from '../../streams/automation-triggers';
import { JetStreamOutbox } from '../../streams/outbox';
import { RetentionJob } from '../../storage/retention-job';
import { RollupFold } from '../../storage/rollup-fold';
import { RollupFolder } from '../../workers/telemetry/rollup-folder';
import { StreamWorker, defaultStreamWorkerConfig } from '../../workers/telemetry/stream-worker';
import { WebhookNotifier } from '../../workers/webhooks/webhook-notifier';
import type { Component } from '../component';
import type { Config } from '../config';
import type { Adapters } from './adapters';
import { detectionRulesCacheOf } from './detection-rules';
import { snmpPollerOf } from './enrichment';

const retentionIntervalMs = 3_600_000;
/**
 * How often the minute rollups are folded into the 5-minute and hourly levels (a closed bucket is read from the
 * minutes until then), and how long a bucket folded before waits when late rows made it pending again.
 */
const rollupFoldRounds = { intervalMs: 15_000, refoldAfterMs: 120_000 };

/** The stream-workers role: consume accepted telemetry into ClickHouse, correlate, fold the coarse rollups, expire old partitions. */
export function streamWorkersRole(config: Config, a: Adapters) {
  const store = new TelemetryStore(a.clickhouse);
  const rules = detectionRulesCacheOf(a);
  const outbox = new JetStreamOutbox({ nats: a.nats, prefix: config.nats.prefix, registry: a.registry });
  // An opened or escalated incident may start automation runs: its events go to the triggers too.
  const events = bothOutboxes(outbox, new AutomationTriggers({ nats: a.nats, prefix: config.nats.prefix, registry: a.registry }));
  const attacks = new AttackWindowsRepo(a.clickhouse);
  const incidents = new IncidentsRepo(a.clickhouse);
  const correlator = new Correlator({ signals: new SignalRuns(a.clickhouse), incidents, registry: a.registry, events, rules, attacks });
  // The rate detectors resolve the incidents of attacks that ended, audited as a person's resolution is.
  const heads = new AuditHeads(a.nats, config.nats.prefix, config.nats.replicas);
  const audit = new AuditLedger(new AuditRepo(a.clickhouse), heads, a.registry, config.audit.chainKey);
  const worker = new StreamWorker(
    { ...defaultStreamWorkerConfig(config.nats.prefix), ...config.workers, maxDeliveries: config.deadLetter.afterDeliveries, ackWaitMs: config.nats.ackWaitMs },
    { nats: a.nats, store, correlator, rules, registry: a.registry, log: a.log, topology: a.topology, detectionFeed: new DetectionFeed({ nats: a.nats, prefix: config.nats.prefix, registry: a.registry }) },
  );
  // The rate detectors: every process of the role contends, the lock's holder consumes the copies of written flows.
  const detection = new DetectionWorker(
    { ...defaultDetectionWorkerConfig(config.nats.prefix), ackWaitMs: a.topology.ackWaitMs },
    {
      nats: a.nats,
      locks: a.locks,
      rules,
      workspaces: new KnownWorkspaces(defaultKnownWorkspacesConfig, { keys: new KeysRepo(a.clickhouse) }),
      resolutions: new QuietResolutions({ incidents, correlator, audit }),
      signals: { existingEventIds: (table, org, minTs, maxTs, ids) => store.existingEventIds(table, org, minTs, maxTs, ids), insertSignals: (ndjson) => store.insert('signals', ndjson) },
      attacks,
      correlator,
      registry: a.registry,
      log: a.log,
    },
  );
  const retention = new RetentionJob(
    { retention: config.clickhouse.retention, intervalMs: retentionIntervalMs },
    { clickhouse: a.clickhouse, log: a.log, registry: a.registry },
  );
  const folder = new RollupFolder(rollupFoldRounds, { fold: new RollupFold(a.clickhouse), locks: a.locks, registry: a.registry, log: a.log });
  const notifier = new WebhookNotifier(
    { ...config.webhooks, prefix: config.nats.prefix },
    { nats: a.nats, webhooks: new WebhooksRepo(a.clickhouse), registry: a.registry, log: a.log },
  );
  // Interface names by SNMP: the stream workers hold the key the agents' credentials are sealed with.
  const snmpPoller = snmpPollerOf(config, a);
  // The heads start before the detectors that append resolutions, and stop after them.
  const components: Component[] = [heads, worker, detection, retention, folder, notifier, snmpPoller];
  return { components, worker, detection, notifier, snmpPoller, folder };
}
