import type { ClassificationService } from '../application/enrichment/classification-service';
import type { InterfaceEnrichment } from '../application/enrichment/interface-enrichment';
import type { AgentStatus } from '../storage/enrichment/interfaces-repo';
import type { AuthThrottle } from '../application/auth-throttle';
import type { AuditLedger } from '../application/audit-ledger';
import type { QueryBudget } from '../application/query-budget';
import type { DetectionRulesService } from '../application/detection-rules-service';
import type { NetworksService } from '../application/enrichment/networks-service';
import type { SavedViewsService } from '../application/saved-views-service';
import type { ExporterService } from '../application/exporter-service';
import type { IncidentService } from '../application/incident-service';
import type { IngestService } from '../application/ingest-service';
import type { KeysService } from '../application/keys-service';
import type { PlaybookService } from '../application/playbook-service';
import type { PolicyService } from '../application/policy-service';
import type { PrefixService } from '../application/prefix-service';
import type { AutomationService } from '../application/automation-service';
import type { ReplayService } from '../application/replay-service';
import type { WebhookService } from '../application/webhook-service';
import type { GroupMappingsService } from '../application/identity/group-mappings-service';
import type { SsoRequirements } from '../application/identity/sso-requirements';
import type { GuardrailService } from '../application/guardrails/guardrail-service';
import type { BearerSignIn } from '../application/identity/bearer-sign-in';
import type { PersonAccess } from '../application/identity/person-access';
import type { TrustedProxies } from '../core/client-address';
import type { ConsoleAuth } from './session-auth';
import type { Logger } from '../observability/logger';
import type { Registry } from '../observability/metrics';
import type { KeyRevocations } from '../streams/key-revocations';
import type { AnalyticsRepo } from '../storage/analytics-repo';
import type { QueryLimits } from '../storage/query-limits';

/** One engine or loop as /healthz reports it. */
export interface HealthProbe {
  name: string;
  /** Resolves with what to show when it is up; rejects when it is not. */
  probe(): Promise<{ version?: string; detail?: string }>;
}

/** What the HTTP layer needs; built once per process by the wiring in service/. */
export interface ApiDeps {
  bodyLimitBytes: number;
  keys: KeysService;
  /** Failed authentication per client address, taken from the socket or, behind trusted proxies, X-Forwarded-For. */
  authThrottle: AuthThrottle;
  trustedProxies: TrustedProxies;
  /** The bearer a Prometheus scraper presents on /metrics (METRICS_TOKEN); unset: only the platform admin key reads them. */
  metricsToken?: string;
  /** Revocations told to the other API processes (a component the api role starts). */
  revocations: KeyRevocations;
  audit: AuditLedger;
  ingest: IngestService;
  incidents: IncidentService;
  analytics: AnalyticsRepo;
  /** Analysts' bounds: the longest ranges (days) on rollups and on raw flows, and the engine limits (named by the 422 that reports one). */
  analyticsLimits: { limits: QueryLimits; maxRangeDays: number; maxRawRangeDays: number };
  /** Cost per workspace of analysts' queries and audit verification (core/query-cost.ts), shared by the API processes. */
  queryBudget: QueryBudget;
  /** Entries one audit verification call checks at most. */
  auditVerifyMaxEntries: number;
  policies: PolicyService;
  replays: ReplayService;
  automations: AutomationService;
  exporters: ExporterService;
  /** Exporters' SNMP agents, static interfaces and interface rows; the workspace's classification rules. */
  interfaceEnrichment: InterfaceEnrichment;
  classification: ClassificationService;
  /** SNMP agents that do not answer now, of every workspace (/healthz). */
  failingAgents?: (limit: number) => Promise<AgentStatus[]>;
  prefixes: PrefixService;
  detectionRules: DetectionRulesService;
  playbooks: PlaybookService;
  networks: NetworksService;
  /** The workspaces' saved views of the visualize page. */
  views: SavedViewsService;
  webhooks: WebhookService;
  /** Single sign-on: each workspace's group mappings, and whether the platform admin requires single sign-on of its people. */
  groupMappings: GroupMappingsService;
  ssoRequirements: SsoRequirements;
  /** Guardrails with two pairs of eyes: the workspace's setting, the changes held for a second person. */
  guardrails: GuardrailService;
  /** What a signed-in person holds, from their groups (the console's sessions use it too). */
  personAccess: PersonAccess;
  /** People's bearer tokens; absent when single sign-on is off (OIDC_ISSUER_URL unset). */
  people?: BearerSignIn;
  /** Engines this process talks to. */
  engines: HealthProbe[];
  /** The long-running loops of this process's roles (stream workers, Temporal worker). */
  loops: HealthProbe[];
  registry: Registry;
  log: Logger;
  /** The console's sign-in and sessions (key sessions always; single sign-on when an OpenID provider is configured). */
  consoleAuth: ConsoleAuth;
  /** The browser console: its built assets, and the Temporal Web UI it links operators to. */
  console?: { dir: string; temporalUiUrl?: string };
}
