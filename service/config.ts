import path from 'node:path';
import { allowedHostSet, type RetrySchedule } from '../core/outbound';
import type { SupervisionConfig } from '../engines/supervisor';
import type { ClickHouseTls } from '../storage/clickhouse';
import type { NatsAuth, NatsTls } from '../streams/nats-client';
import type { TemporalTls } from '../temporal/temporal-client';
import { clickhouseTlsOf, natsAccessOf, temporalAccessOf } from './engine-access';
import type { Retention } from '../storage/migrations/migration';
import type { QueryLimits } from '../storage/query-limits';
import { envSchema, type Env, type ProcessRole } from './config-env';

export type { ProcessRole };

/**
 * The one place that reads the environment (its variables in config-env.ts).
 * Every component receives its part of this typed object; no other module
 * touches process.env.
 */
export interface Config {
  http: {
    host: string;
    port: number;
    bodyLimitBytes: number;
    /** Slow clients: headers, then the whole request, must arrive within these; an idle kept-alive socket closes after the third. */
    headersTimeoutMs: number;
    requestTimeoutMs: number;
    keepAliveTimeoutMs: number;
    /** Open sockets the API accepts at once (keep it under `ulimit -n`); past it new ones are closed. */
    maxConnections: number;
  };
  /** Failed authentication: per client address, taken from the socket or, behind these proxies, X-Forwarded-For. */
  /** `metricsToken`: the bearer a Prometheus scraper presents on /metrics (the platform admin key works too). */
  auth: { failuresPerMinute: number; trustedProxies: string[]; metricsToken?: string };
  rateLimit: { recordsPerSecond: number; burstSeconds: number };
  /** Analysts' queries: the engine limits each runs under, and the longest range (days) on rollups and on the raw flows. */
  analytics: { limits: QueryLimits; maxRangeDays: number; maxRawRangeDays: number };
  /** Cost units (core/query-cost.ts) each key may spend a minute on analysts' queries and audit verification, and at once. */
  queryBudget: { unitsPerMinute: number; burstUnits: number };
  /** Entries one call of /v1/audit/verify checks at most; the rest by its cursor. */
  auditVerify: { maxEntries: number };
  /** The key audit entries are chained with (HMAC); resolved at start (service/stack.ts). */
  audit: { chainKey?: string };
  /** The longest window a replay may run on. */
  replays: { maxWindowMinutes: number };
  dataDir: string;
  /** How the local engines of the embedded default are kept running (engines/supervisor.ts). */
  supervision: SupervisionConfig;
  /** Where the set-up script keeps tools it built (the Temporal CLI); shared by every clone. */
  toolsDir: string;
  /** Folders searched for engine binaries. */
  binPath: string[];
  adminApiKey?: string;
  roles: ProcessRole[];
  logLevel: string;
  nats: {
    /** Without credentials: those are in `auth` (service/engine-access.ts takes them out of NATS_URL). */
    url?: string;
    /** How to authenticate to NATS_URL's servers; the embedded nats-server's are generated (service/roles/engines.ts). */
    auth?: NatsAuth;
    tls?: NatsTls;
    prefix: string;
    embeddedPort: number;
    streamMaxBytes: number;
    ackWaitMs: number;
    /** Copies JetStream keeps of every stream and key-value bucket: 1 on the embedded server, 3 on a cluster. */
    replicas: number;
    /** A nats-server binary for the embedded server; without one, the set-up's build in the tools folder. */
    server?: string;
    /** The embedded server's bound on its JetStream file store (`max_file_store`). */
    embeddedMaxFileStoreBytes: number;
  };
  workers: { maxMessages: number; maxWaitMs: number; maxBatchBytes: number };
  /** Messages ClickHouse refuses: after how many deliveries they are dead-lettered, and the dead-letter stream's bound. */
  deadLetter: { afterDeliveries: number; maxBytes: number };
  clickhouse: { url?: string; user: string; password: string; tls?: ClickHouseTls; database: string; retention: Retention; chdbSpoolDir?: string };
  /** The collector role: GoFlow2's UDP listeners and how the collector reads the exporter registry. */
  collector: {
    host: string;
    netflowPort: number;
    sflowPort: number;
    /** GoFlow2's own metrics endpoint on loopback; 0 picks a free port. */
    metricsPort: number;
    workers: number;
    queueSize: number;
    registryRefreshMs: number;
    /** A GoFlow2 binary; without one, the set-up's build in the tools folder. */
    goflow2?: string;
  };
  /** Outbound webhooks: the outbound rules, the secrets' sealing key, and each delivery's limits and retry schedule. */
  webhooks: {
    allowedHosts: Set<string>;
    /** Seals new signing secrets; resolved at start (service/stack.ts: generated on the embedded default, required with a ClickHouse server). */
    secretsKey?: string;
    /** Keys of before a rotation: secrets they sealed still open. */
    previousSecretsKeys: string[];
    timeoutMs: number;
    maxResponseBytes: number;
    retry: RetrySchedule;
    concurrency: number;
    /** Webhooks a workspace may have (deleted ones aside), and test sends it may ask for a minute. */
    maxPerWorkspace: number;
    testSendsPerMinute: number;
  };
  temporal: {
    address?: string;
    /** Mutual TLS, or an API key (over TLS), to TEMPORAL_ADDRESS. */
    tls?: TemporalTls;
    apiKey?: string;
    namespace: string;
    taskQueue: string;
    cli?: string;
    embeddedPort: number;
    /** A prebuilt workflow bundle; without one the worker bundles workflows/ when it starts. */
    workflowBundlePath?: string;
    /** The embedded dev server's Web UI port (loopback only). */
    embeddedUiPort: number;
    /** The Web UI the console links operators to: TEMPORAL_UI_URL, else the embedded server's. */
    uiUrl?: string;
  };
  /** The browser console's built assets (the set-up builds them with Vite). */
  console: { dir: string };
  /** Replays stored `queued` whose workflow never started: how often they are looked for, after how long, when one is failed. */
  replayReconciler: { intervalMs: number; graceMs: number; failAfterMs: number };
  /** Signs replay decisions' tokens (core/decision-token.ts); unset, the start resolves it (service/decision-signing-key.ts). */
  decisions: { signingKey?: string };
}


function collectorConfigOf(e: Env): Config['collector'] {
  return {
    host: e.COLLECTOR_HOST ?? e.HOST,
    netflowPort: e.COLLECTOR_NETFLOW_PORT,
    sflowPort: e.COLLECTOR_SFLOW_PORT,
    metricsPort: e.COLLECTOR_METRICS_PORT,
    workers: e.COLLECTOR_WORKERS,
    queueSize: e.COLLECTOR_QUEUE_SIZE,
    registryRefreshMs: e.COLLECTOR_REGISTRY_REFRESH_MS,
    goflow2: e.GOFLOW2,
  };
}

function webhooksConfigOf(e: Env): Config['webhooks'] {
  return {
    allowedHosts: allowedHostSet(e.WEBHOOK_ALLOWED_HOSTS),
    secretsKey: e.WEBHOOK_SECRETS_KEY,
    previousSecretsKeys: e.WEBHOOK_SECRETS_PREVIOUS_KEYS,
    timeoutMs: e.WEBHOOK_TIMEOUT_MS,
    maxResponseBytes: e.WEBHOOK_MAX_RESPONSE_BYTES,
    retry: { baseMs: e.WEBHOOK_RETRY_BASE_MS, maxMs: e.WEBHOOK_RETRY_MAX_MS, giveUpAfterMs: e.WEBHOOK_RETRY_FOR_MS },
    concurrency: e.WEBHOOK_CONCURRENCY,
    maxPerWorkspace: e.WEBHOOK_MAX_PER_WORKSPACE,
    testSendsPerMinute: e.WEBHOOK_TEST_SENDS_PER_MINUTE,
  };
}

function natsConfig(e: Env): Config['nats'] {
  // The embedded nats-server is one node: a stream with more replicas than nodes cannot be created.
  if (!e.NATS_URL && e.NATS_REPLICAS > 1) {
    throw new Error('invalid configuration: NATS_REPLICAS: more than 1 needs a NATS cluster (NATS_URL); the embedded nats-server is a single node');
  }
  return {
    ...natsAccessOf(e),
    prefix: e.NATS_PREFIX,
    embeddedPort: e.EMBEDDED_NATS_PORT,
    streamMaxBytes: e.NATS_STREAM_MAX_BYTES,
    ackWaitMs: e.NATS_ACK_WAIT_MS,
    replicas: e.NATS_REPLICAS,
    server: e.NATS_SERVER,
    embeddedMaxFileStoreBytes: e.EMBEDDED_NATS_MAX_FILE_STORE,
  };
}

function clickhouseConfigOf(e: Env): Config['clickhouse'] {
  return {
    url: e.CLICKHOUSE_URL,
    user: e.CLICKHOUSE_USER,
    password: e.CLICKHOUSE_PASSWORD,
    tls: clickhouseTlsOf(e),
    database: e.CLICKHOUSE_DATABASE,
    chdbSpoolDir: e.CHDB_SPOOL_DIR,
    retention: { raw: e.RETENTION_DAYS, minute: e.RETENTION_1M_DAYS, fiveMinutes: e.RETENTION_5M_DAYS, hour: e.RETENTION_1H_DAYS },
  };
}

function temporalConfigOf(e: Env): Config['temporal'] {
  return {
    address: e.TEMPORAL_ADDRESS,
    ...temporalAccessOf(e),
    namespace: e.TEMPORAL_NAMESPACE,
    taskQueue: e.TEMPORAL_TASK_QUEUE,
    cli: e.TEMPORAL_CLI,
    workflowBundlePath: e.TEMPORAL_WORKFLOW_BUNDLE,
    embeddedPort: e.EMBEDDED_TEMPORAL_PORT,
    embeddedUiPort: e.EMBEDDED_TEMPORAL_UI_PORT,
    uiUrl: e.TEMPORAL_UI_URL ?? (e.TEMPORAL_ADDRESS ? undefined : `http://127.0.0.1:${e.EMBEDDED_TEMPORAL_UI_PORT}`),
  };
}

export function loadConfig(env: Record<string, string | undefined>): Config {
  const parsed = envSchema.safeParse(env);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`);
    throw new Error(`invalid configuration: ${lines.join('; ')}`);
  }
  const e = parsed.data;
  return {
    http: { host: e.HOST, port: e.PORT, bodyLimitBytes: e.BODY_LIMIT_BYTES, maxConnections: e.HTTP_MAX_CONNECTIONS,
      headersTimeoutMs: e.HTTP_HEADERS_TIMEOUT_MS, requestTimeoutMs: e.HTTP_REQUEST_TIMEOUT_MS, keepAliveTimeoutMs: e.HTTP_KEEP_ALIVE_TIMEOUT_MS },
    auth: { failuresPerMinute: e.AUTH_FAILURES_PER_MINUTE, trustedProxies: e.TRUSTED_PROXIES, metricsToken: e.METRICS_TOKEN },
    rateLimit: { recordsPerSecond: e.RATE_LIMIT_RECORDS_PER_SECOND, burstSeconds: e.RATE_LIMIT_BURST_SECONDS },
    analytics: {
      limits: { maxExecutionSeconds: e.ANALYTICS_MAX_EXECUTION_SECONDS, maxMemoryBytes: e.ANALYTICS_MAX_MEMORY_BYTES, maxRowsToRead: e.ANALYTICS_MAX_ROWS_TO_READ },
      maxRangeDays: e.ANALYTICS_MAX_RANGE_DAYS,
      maxRawRangeDays: e.ANALYTICS_MAX_RAW_RANGE_DAYS,
    },
    queryBudget: { unitsPerMinute: e.QUERY_BUDGET_UNITS_PER_MINUTE, burstUnits: e.QUERY_BUDGET_BURST_UNITS },
    auditVerify: { maxEntries: e.AUDIT_VERIFY_MAX_ENTRIES },
    audit: { chainKey: e.AUDIT_CHAIN_KEY },
    replays: { maxWindowMinutes: e.REPLAY_MAX_WINDOW_MINUTES },
    dataDir: path.resolve(e.DATA_DIR),
    supervision: {
      checkIntervalMs: e.ENGINE_CHECK_INTERVAL_MS,
      backoffMs: e.ENGINE_RESTART_BACKOFF_MS,
      maxBackoffMs: e.ENGINE_RESTART_MAX_BACKOFF_MS,
      livenessFailAfterMs: e.ENGINE_LIVENESS_FAIL_AFTER_MS,
    },
    toolsDir: e.TOOLS_DIR ?? path.join(e.XDG_CACHE_HOME ?? path.join(e.HOME ?? '/tmp', '.cache'), 'nettel', 'bin'),
    binPath: [...e.PATH.split(':'), '/usr/sbin', '/usr/local/sbin'],
    adminApiKey: e.ADMIN_API_KEY,
    roles: e.ROLES,
    logLevel: e.LOG_LEVEL,
    nats: natsConfig(e),
    workers: { maxMessages: e.WORKER_MAX_MESSAGES, maxWaitMs: e.WORKER_MAX_WAIT_MS, maxBatchBytes: e.WORKER_MAX_BATCH_BYTES },
    deadLetter: { afterDeliveries: e.WORKER_MAX_DELIVERIES, maxBytes: e.NATS_DEAD_LETTER_MAX_BYTES },
    clickhouse: clickhouseConfigOf(e),
    collector: collectorConfigOf(e),
    webhooks: webhooksConfigOf(e),
    temporal: temporalConfigOf(e),
    console: { dir: path.resolve(e.CONSOLE_DIR) },
    replayReconciler: { intervalMs: e.REPLAY_RECONCILE_INTERVAL_MS, graceMs: e.REPLAY_RECONCILE_GRACE_MS, failAfterMs: e.REPLAY_START_FAIL_AFTER_MS },
    decisions: { signingKey: e.DECISION_SIGNING_KEY },
  };
}
