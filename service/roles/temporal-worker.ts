import { AuditLedger } from '../../application/audit-ledger';
import { startReplayWorkflow } from '../../application/replay-service';
import { AuditRepo } from '../../storage/audit-repo';
import { IncidentsRepo } from '../../storage/incidents-repo';
import { KeysRepo } from '../../storage/keys-repo';
import { PoliciesRepo } from '../../storage/policies-repo';
import { ReplayHistory } from '../../storage/replay-history';
import { ReplaysRepo } from '../../storage/replays-repo';
import { AuditHeads } from '../../streams/audit-heads';
import { JetStreamOutbox } from '../../streams/outbox';
import { createReplayActivities } from '../../workers/governance/activities/replay-activities';
import { ReplayReconciler, defaultReplayReconcilerConfig } from '../../workers/governance/replay-reconciler';
import { TemporalWorker } from '../../workers/governance/temporal-worker';
import type { Component } from '../component';
import type { Config } from '../config';
import { decisionTokensOf } from '../decision-signing-key';
import type { Adapters } from './adapters';
import { detectionRulesCacheOf } from './detection-rules';
import type { EngineAddresses } from './engines';

/**
 * The temporal-worker role: run the governance workflows and their
 * activities. The activities audit approvers' decisions, so the role has its
 * own audit ledger over the workspace chains' heads in JetStream. The
 * replay reconciler starts the workflows of replays stranded in `queued`.
 */
export function temporalWorkerRole(config: Config, addresses: EngineAddresses, a: Adapters) {
  const heads = new AuditHeads(a.nats, config.nats.prefix, config.nats.replicas);
  const audit = new AuditLedger(new AuditRepo(a.clickhouse), heads, a.registry, config.audit.chainKey);
  const replays = new ReplaysRepo(a.clickhouse);
  const activities = createReplayActivities({
    incidents: new IncidentsRepo(a.clickhouse),
    policies: new PoliciesRepo(a.clickhouse),
    replays,
    history: new ReplayHistory(a.clickhouse),
    rules: detectionRulesCacheOf(a),
    keys: new KeysRepo(a.clickhouse),
    decisionTokens: decisionTokensOf(config),
    audit,
    heads,
    registry: a.registry,
    events: new JetStreamOutbox({ nats: a.nats, prefix: config.nats.prefix, registry: a.registry }),
  });
  const worker = new TemporalWorker(
    {
      address: addresses.temporalAddress,
      tls: config.temporal.tls,
      apiKey: config.temporal.apiKey,
      namespace: config.temporal.namespace,
      taskQueue: config.temporal.taskQueue,
      workflowBundlePath: config.temporal.workflowBundlePath,
    },
    { activities, log: a.log, registry: a.registry },
  );
  const reconciler = new ReplayReconciler(
    { ...defaultReplayReconcilerConfig, ...config.replayReconciler },
    {
      replays,
      // Each start within 5 s: with Temporal away, a round must not wait out the client's retries replay by replay.
      start: (input) => a.temporal.client.withDeadline(Date.now() + 5_000, () => startReplayWorkflow(a.temporal.client, config.temporal.taskQueue, input)),
      audit,
      // One process reconciles at a time; the others skip their round.
      lead: (work) => a.locks.tryWithLock('replay-reconciler', work),
      registry: a.registry,
      log: a.log,
    },
  );
  // The heads start before the worker runs an activity that appends, and stop after it.
  const components: Component[] = [heads, worker, reconciler];
  return { components, worker };
}
