import { AuditLedger } from '../../application/audit-ledger';
import { noPlaybooks, playbookAuthor } from '../../core/playbooks';
import { signalAttackEnded, startAutomationWorkflow } from '../../application/automation-runs';
import { startReplayWorkflow } from '../../application/replay-service';
import { counter } from '../../observability/metrics';
import { AuditRepo } from '../../storage/audit-repo';
import { AutomationsRepo } from '../../storage/automations-repo';
import { IncidentsRepo } from '../../storage/incidents-repo';
import { KeysRepo } from '../../storage/keys-repo';
import { PoliciesRepo } from '../../storage/policies-repo';
import { ReplayHistory } from '../../storage/replay-history';
import { PlaybooksRepo } from '../../storage/playbooks-repo';
import { PrefixesRepo } from '../../storage/prefixes-repo';
import { ReplaysRepo } from '../../storage/replays-repo';
import { AuditHeads } from '../../streams/audit-heads';
import { JetStreamOutbox } from '../../streams/outbox';
import { durableConsumeLoop } from '../../workers/consume/durable-loop';
import { automationStarter, automationStarterConsumer } from '../../workers/governance/automation-starter';
import { createAutomationActivities, type AutomationActivityDeps } from '../../workers/governance/activities/automation-activities';
import { createReplayActivities } from '../../workers/governance/activities/replay-activities';
import { ReplayReconciler, defaultReplayReconcilerConfig } from '../../workers/governance/replay-reconciler';
import { TemporalWorker } from '../../workers/governance/temporal-worker';
import type { Component } from '../component';
import type { Config } from '../config';
import { decisionTokensOf } from '../decision-signing-key';
import type { Adapters } from './adapters';
import { detectionRulesCacheOf } from './detection-rules';
import type { EngineAddresses } from './engines';
import type { mitigationRole } from './mitigation';

/** How many minutes of stored flows an automation run's preview reads. */
const previewMinutes = 5;

/**
 * The temporal-worker role: run the governance workflows (replays, automation
 * runs) and their activities. The activities audit approvers' decisions, so
 * the role has its own audit ledger over the workspace chains' heads in
 * JetStream. The replay reconciler starts the workflows of replays stranded
 * in `queued`. Automation runs write the mitigation ledger of `mitigation`
 * (absent when no BGP speaker is configured: runs that announce then fail).
 */
export function temporalWorkerRole(config: Config, addresses: EngineAddresses, a: Adapters, mitigation?: ReturnType<typeof mitigationRole>) {
  const heads = new AuditHeads(a.nats, config.nats.prefix, config.nats.replicas);
  const audit = new AuditLedger(new AuditRepo(a.clickhouse), heads, a.registry, config.audit.chainKey);
  const replays = new ReplaysRepo(a.clickhouse);
  const playbooks = new PlaybooksRepo(a.clickhouse);
  const common = {
    incidents: new IncidentsRepo(a.clickhouse),
    policies: new PoliciesRepo(a.clickhouse),
    keys: new KeysRepo(a.clickhouse),
    decisionTokens: decisionTokensOf(config),
    policyCooldownMinutes: config.approvals.policyCooldownMinutes,
    audit,
    heads,
    registry: a.registry,
    events: new JetStreamOutbox({ nats: a.nats, prefix: config.nats.prefix, registry: a.registry }),
  };
  const activities = {
    ...createReplayActivities({
      ...common,
      replays,
      history: new ReplayHistory(a.clickhouse),
      rules: detectionRulesCacheOf(a),
      playbooks: { clickhouse: a.clickhouse, blackholeNextHop: config.bgp.blackholeNextHop, operatorBounds: config.bgp.allowed, inForce: async (orgId) => (await playbooks.latest(orgId)) ?? noPlaybooks },
    }),
    ...automationActivities(config, a, playbooks, common, mitigation),
  };
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
  const starter = automationStarterLoop(config, a, playbooks, common.incidents);
  // The heads start before the worker runs an activity that appends, and stop after it.
  const components: Component[] = [heads, worker, reconciler, starter];
  return { components, worker, starter };
}

/** The automation workflow's activities: they read playbook versions and approved prefixes, and write the mitigation ledger. */
function automationActivities(config: Config, a: Adapters, playbooks: PlaybooksRepo, common: Omit<AutomationActivityDeps, 'automations' | 'clickhouse' | 'playbookActions' | 'approvedPrefixes' | 'blackholeNextHop' | 'operatorBounds' | 'previewMinutes' | 'withLock'>, mitigation?: ReturnType<typeof mitigationRole>) {
  const prefixes = new PrefixesRepo(a.clickhouse);
  return createAutomationActivities({
    ...common,
    automations: new AutomationsRepo(a.clickhouse),
    clickhouse: a.clickhouse,
    playbookActions: async (orgId, playbookId, version) => (await playbooks.version(orgId, version))?.playbooks.find((p) => p.id === playbookId)?.actions,
    approvedPrefixes: (orgId) => prefixes.approved(orgId),
    ...(mitigation ? { mitigations: { ledger: mitigation.ledger, reconcileNow: () => mitigation.reconciler.reconcileNow() } } : {}),
    blackholeNextHop: config.bgp.blackholeNextHop,
    operatorBounds: config.bgp.allowed,
    withLock: (name, work) => a.locks.withLock(name, work),
    previewMinutes,
  });
}

/** The automation starter: the triggers' durable consumer, starting a run per matching playbook. */
/** A run in these states holds nothing and waits for nothing: a resolved incident's signal is not sent to it. */
const endedRunStatuses: readonly string[] = ['completed', 'withdrawn', 'denied', 'expired', 'failed'];

function automationStarterLoop(config: Config, a: Adapters, playbooks: PlaybooksRepo, incidents: IncidentsRepo) {
  const automations = new AutomationsRepo(a.clickhouse);
  const handle = automationStarter({
    prefix: config.nats.prefix,
    incidents,
    playbooks: async (orgId) => (await playbooks.latest(orgId)) ?? noPlaybooks,
    authorOf: async (orgId, playbookId, version) => playbookAuthor(await playbooks.versions(orgId, version), playbookId),
    // Each start within 5 s: with Temporal away, the trigger is offered again rather than held.
    start: (input) => a.temporal.client.withDeadline(Date.now() + 5_000, () => startAutomationWorkflow(a.temporal.client, config.temporal.taskQueue, input)),
    attackEnded: async (orgId, incidentId) => {
      const runs = await automations.list(orgId, { incidentId, limit: 100 });
      const told = await Promise.all(
        runs.filter((r) => !endedRunStatuses.includes(r.status)).map((r) => a.temporal.client.withDeadline(Date.now() + 5_000, () => signalAttackEnded(a.temporal.client, orgId, r.automation_id))),
      );
      return told.filter(Boolean).length;
    },
    registry: a.registry,
    log: a.log,
  });
  const restarts = counter(a.registry, {
    name: 'nettel_automation_consume_restarts_total',
    help: 'Re-opened pulls of the automation starter, by consumer and the reason consuming stopped',
    labelNames: ['consumer', 'reason'] as const,
  });
  return durableConsumeLoop(automationStarterConsumer(config.nats.prefix), handle, { nats: a.nats, log: a.log, restarts });
}
