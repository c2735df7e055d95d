import { createApp } from '../../api/app';
import type { ApiDeps, HealthProbe } from '../../api/deps';
import { KeyRevocations } from '../../streams/key-revocations';
import { HttpServer } from '../../api/http-server';
import { AuthThrottle } from '../../application/auth-throttle';
import { AuditLedger } from '../../application/audit-ledger';
import { Correlator } from '../../application/correlator';
import { DetectionRulesService } from '../../application/detection-rules-service';
import { CurrentMappingsCache, GroupMappingsService } from '../../application/identity/group-mappings-service';
import { PersonAccess } from '../../application/identity/person-access';
import { BearerSignIn } from '../../application/identity/bearer-sign-in';
import { TokenVerifier } from '../../application/identity/token-verifier';
import { SsoRequirements } from '../../application/identity/sso-requirements';
import { ExporterService, type WithLock } from '../../application/exporter-service';
import { IncidentService } from '../../application/incident-service';
import { IngestService } from '../../application/ingest-service';
import { KeysService } from '../../application/keys-service';
import { PlaybookService } from '../../application/playbook-service';
import { PolicyService, type PolicyChange } from '../../application/policy-service';
import { GuardrailService } from '../../application/guardrails/guardrail-service';
import { PrefixService } from '../../application/prefix-service';
import { QueryBudget } from '../../application/query-budget';
import { recordRateLimiter } from '../../application/rate-limiter';
import { AutomationService } from '../../application/automation-service';
import { ReplayService } from '../../application/replay-service';
import { WebhookService } from '../../application/webhook-service';
import { TrustedProxies } from '../../core/client-address';
import { AnalyticsRepo } from '../../storage/analytics-repo';
import { AuditRepo } from '../../storage/audit-repo';
import { DetectionRulesRepo } from '../../storage/detection-rules-repo';
import { SsoRepo } from '../../storage/sso-repo';
import { ExportersRepo } from '../../storage/exporters-repo';
import { IncidentSignals } from '../../storage/incident-signals';
import { AttackWindowsRepo } from '../../storage/attack-windows-repo';
import { IncidentsRepo } from '../../storage/incidents-repo';
import { KeysRepo } from '../../storage/keys-repo';
import { PlaybooksRepo } from '../../storage/playbooks-repo';
import { NetworksRepo } from '../../storage/enrichment/networks-repo';
import { NetworksService } from '../../application/enrichment/networks-service';
import { SavedViewsService } from '../../application/saved-views-service';
import { SavedViewsRepo } from '../../storage/saved-views-repo';
import { PoliciesRepo } from '../../storage/policies-repo';
import { GuardrailsRepo } from '../../storage/guardrails-repo';
import type { OperatorBounds, PlaybooksDocument } from '../../core/playbooks';
import { PrefixesRepo } from '../../storage/prefixes-repo';
import { AutomationsRepo } from '../../storage/automations-repo';
import { ReplaysRepo } from '../../storage/replays-repo';
import { SignalRuns } from '../../storage/signal-runs';
import { WebhooksRepo } from '../../storage/webhooks-repo';
import { AuditHeads } from '../../streams/audit-heads';
import { JetStreamOutbox } from '../../streams/outbox';
import { TelemetryPublisher } from '../../streams/telemetry-publisher';
import { WebhookDeliveryQueue } from '../../streams/webhook-queue';
import type { Component } from '../component';
import type { Config } from '../config';
import { decisionTokensOf } from '../decision-signing-key';
import type { Adapters } from './adapters';
import type { QueryBudgetBucket } from '../../streams/query-budget-bucket';
import { queryBudgetBucketOf } from '../jetstream-objects';
import { consoleAuthOf } from './console-auth';

import { detectionRulesCacheOf } from './detection-rules';
import { enrichmentServices } from './enrichment';

function engineProbes(a: Adapters): HealthProbe[] {
  return [
    { name: 'nats', probe: () => a.nats.probe() },
    { name: 'clickhouse', probe: async () => ({ version: await a.clickhouse.version(), detail: a.clickhouse.transport }) },
    { name: 'temporal', probe: () => a.temporal.probe() },
  ];
}

/** Single sign-on: the group mappings, what they grant a person, and the platform admin's requirement. */
function identityServices(config: Config, a: Adapters, audit: AuditLedger, withLock: WithLock) {
  const repo = new SsoRepo(a.clickhouse);
  const mappings = new CurrentMappingsCache({ repo });
  const personAccess = new PersonAccess({ mappings });
  const people = config.oidc
    ? new BearerSignIn({ issuer: config.oidc.issuerUrl, verifier: new TokenVerifier(config.oidc), access: personAccess, audit, registry: a.registry, log: a.log })
    : undefined;
  return {
    groupMappings: new GroupMappingsService({ repo, cache: mappings, audit, withLock }),
    personAccess,
    people,
    ssoRequirements: new SsoRequirements({ repo, audit, withLock }),
  };
}

/**
 * The policies and playbooks, guarded (application/guardrails): a change that
 * loosens them waits for a second person where the workspace asks, and is
 * applied through these same services once approved.
 */
function guardedServices(a: Adapters, audit: AuditLedger, withLock: WithLock, policies: PoliciesRepo, approvedPrefixes: (orgId: string) => Promise<string[]>, operatorBounds: OperatorBounds) {
  const playbooksRepo = new PlaybooksRepo(a.clickhouse);
  const guardrails = new GuardrailService({ repo: new GuardrailsRepo(a.clickhouse), audit, withLock, playbooks: playbooksRepo, policies });
  const policyService = new PolicyService({ policies, audit, guard: guardrails });
  const playbookService = new PlaybookService({ repo: playbooksRepo, audit, withLock, approvedPrefixes, policies, operatorBounds, guard: guardrails });
  guardrails.applyWith('policy.update', (c) => policyService.update(c.org_id, c.requested_by, c.target, c.change as PolicyChange, { approved: true }));
  guardrails.applyWith('policy.deactivate', (c) => policyService.deactivate(c.org_id, c.requested_by, c.target, { approved: true }));
  guardrails.applyWith('playbooks.update', (c) => {
    const { startedFrom, ...document } = c.change as PlaybooksDocument & { startedFrom?: number };
    return playbookService.put(c.org_id, c.requested_by, document, startedFrom, true);
  });
  return { guardrails, policies: policyService, playbooks: playbookService };
}

/** The analysts' queries, their budget, and their saved views. */
function analystServices(config: Config, a: Adapters, queryBudgetBucket: QueryBudgetBucket, audit: AuditLedger, withLock: WithLock) {
  return {
    analytics: new AnalyticsRepo(a.clickhouse, config.analytics.limits),
    analyticsLimits: config.analytics,
    queryBudget: new QueryBudget({ config: config.queryBudget, bucket: queryBudgetBucket, registry: a.registry }),
    views: new SavedViewsService({ repo: new SavedViewsRepo(a.clickhouse), audit, withLock }),
  };
}

/** The domain services the API calls, over this process's adapters. */
function apiServices(config: Config, a: Adapters, heads: AuditHeads, queryBudgetBucket: QueryBudgetBucket) {
  const audit = new AuditLedger(new AuditRepo(a.clickhouse), heads, a.registry, config.audit.chainKey);
  const incidents = new IncidentsRepo(a.clickhouse);
  const policies = new PoliciesRepo(a.clickhouse);
  const automations = new AutomationService({ client: () => a.temporal.client, automations: new AutomationsRepo(a.clickhouse), decisionTokens: decisionTokensOf(config) });
  const prefixes = new PrefixesRepo(a.clickhouse);
  const withLock: WithLock = (name, work) => a.locks.withLock(name, work);
  const rules = detectionRulesCacheOf(a);
  // A person's acknowledgement or resolution changes an incident here: its events go to the outbox too.
  const events = new JetStreamOutbox({ nats: a.nats, prefix: config.nats.prefix, registry: a.registry });
  const attacks = new AttackWindowsRepo(a.clickhouse);
  const correlator = new Correlator({ signals: new SignalRuns(a.clickhouse), incidents, registry: a.registry, events, rules, attacks });
  const publisher = new TelemetryPublisher({ nats: a.nats, prefix: config.nats.prefix, registry: a.registry, writes: a.telemetryWrites });
  const identity = identityServices(config, a, audit, withLock);
  const keys: KeysService = new KeysService({
    repo: new KeysRepo(a.clickhouse),
    personKeysFromSignIn: (orgId) => identity.ssoRequirements.personKeysFromSignIn(orgId),
    audit, registry: a.registry, adminApiKey: config.adminApiKey,
    announceRevocation: (keyId) => revocations.publish(keyId),
  });
  const revocations = new KeyRevocations({ nats: a.nats, prefix: config.nats.prefix, log: a.log, onRevoked: (keyId) => keys.revokedElsewhere(keyId) });
  return {
    ...identity,
    audit,
    keys,
    revocations,
    authThrottle: new AuthThrottle(config.auth, a.registry),
    trustedProxies: new TrustedProxies(config.auth.trustedProxies),
    metricsToken: config.auth.metricsToken,
    ingest: new IngestService({ publisher, rateLimiter: recordRateLimiter(config.rateLimit, a.registry), registry: a.registry, enricher: a.enrichment }),
    incidents: new IncidentService({ incidents, signals: new IncidentSignals(a.clickhouse), correlator, audit, attacks }),
    ...analystServices(config, a, queryBudgetBucket, audit, withLock),
    auditVerifyMaxEntries: config.auditVerify.maxEntries,
    replays: new ReplayService({
      client: () => a.temporal.client,
      taskQueue: config.temporal.taskQueue,
      incidents,
      policies,
      replays: new ReplaysRepo(a.clickhouse),
      audit,
      rules,
      maxWindowMinutes: config.replays.maxWindowMinutes,
      decisionTokens: decisionTokensOf(config),
    }),
    automations,
    exporters: new ExporterService({ exporters: new ExportersRepo(a.clickhouse), audit, withLock }),
    prefixes: new PrefixService({ prefixes, audit, withLock, announced: async (orgId) => (await automations.active(orgId)).map((m) => m.destination) }),
    networks: new NetworksService({ repo: new NetworksRepo(a.clickhouse), tables: a.networks, audit, withLock }),
    ...guardedServices(a, audit, withLock, policies, (orgId) => prefixes.approved(orgId), config.bgp.allowed),
    detectionRules: new DetectionRulesService({ repo: new DetectionRulesRepo(a.clickhouse), cache: rules, audit, withLock }),
    webhooks: new WebhookService({
      webhooks: new WebhooksRepo(a.clickhouse),
      queue: new WebhookDeliveryQueue({ nats: a.nats, prefix: config.nats.prefix }),
      audit,
      settings: config.webhooks,
      registry: a.registry,
    }),
  };
}

/** The api role: the HTTP API over this process's adapters; `loops` are the other roles' loops /healthz reports. */
export function apiRole(config: Config, a: Adapters, loops: HealthProbe[]) {
  const heads = new AuditHeads(a.nats, config.nats.prefix, config.nats.replicas);
  const queryBudgetBucket = queryBudgetBucketOf(config, a.nats);
  const services = apiServices(config, a, heads, queryBudgetBucket);
  const { consoleAuth, buckets: consoleBuckets } = consoleAuthOf(config, a, { keys: services.keys, access: services.personAccess, audit: services.audit });
  const deps: ApiDeps = {
    ...services,
    ...enrichmentServices(config, a, services.audit, (name, work) => a.locks.withLock(name, work)),
    consoleAuth,
    bodyLimitBytes: config.http.bodyLimitBytes,
    engines: engineProbes(a),
    loops,
    registry: a.registry,
    log: a.log,
    console: { dir: config.console.dir, temporalUiUrl: config.temporal.uiUrl },
  };
  const { app, routes } = createApp(deps);
  const server = new HttpServer(config.http, app.callback(), a.registry);
  const components: Component[] = [heads, ...consoleBuckets, queryBudgetBucket, deps.revocations, server];
  return { components, server, routes, deps };
}
