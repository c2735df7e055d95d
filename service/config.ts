import path from 'node:path';
import { z } from 'zod';
import { TrustedProxies } from '../core/client-address';
import { decisionSigningKeyMinLength } from '../core/decision-token';
import { rawRangeDays, rollupRangeDays } from '../core/flow-query';
import { allowedHostSet, type RetrySchedule } from '../core/outbound';
import { maxReplayWindowMinutes } from '../core/replay';
import type { SupervisionConfig } from '../engines/supervisor';
import type { ClickHouseTls } from '../storage/clickhouse';
import type { NatsAuth, NatsTls } from '../streams/nats-client';
import type { TemporalTls } from '../temporal/temporal-client';
import { clickhouseTlsOf, engineAccessEnv, natsAccessOf, temporalAccessOf } from './engine-access';
import type { Retention } from '../storage/migrations/migration';
import { defaultQueryLimits, type QueryLimits } from '../storage/query-limits';

/**
 * The one place that reads the environment. Every component receives its part
 * of this typed object; no other module touches process.env.
 */
const processRoles = ['api', 'stream-workers', 'temporal-worker', 'collector'] as const;
export type ProcessRole = (typeof processRoles)[number];

/** An unset or empty variable both mean "not given". */
const blankAsUnset = (value: unknown) => (typeof value === 'string' && value.trim() === '' ? undefined : value);
const commaList = (value: string) => value.split(',').map((v) => v.trim()).filter(Boolean);
const validProxies = (list: string[]) => {
  try {
    return Boolean(new TrustedProxies(list));
  } catch {
    return false;
  }
};
const optionalUrl = z.preprocess(blankAsUnset, z.string().trim().optional());

const envSchema = z.object({
  ...engineAccessEnv,
  PORT: z.coerce.number().int().min(0).max(65535).default(8080),
  HOST: z.string().default('0.0.0.0'),
  DATA_DIR: z.string().default('./.data'),
  ADMIN_API_KEY: z.preprocess(blankAsUnset, z.string().min(16, 'ADMIN_API_KEY must be at least 16 characters').optional()),
  NATS_URL: optionalUrl,
  CLICKHOUSE_URL: optionalUrl,
  CLICKHOUSE_USER: z.string().default('default'),
  CLICKHOUSE_PASSWORD: z.string().default(''),
  CHDB_SPOOL_DIR: z.preprocess(blankAsUnset, z.string().optional()),
  CLICKHOUSE_DATABASE: z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/).default('nettel'),
  TEMPORAL_ADDRESS: optionalUrl,
  TEMPORAL_NAMESPACE: z.string().default('default'),
  TEMPORAL_TASK_QUEUE: z.string().default('nettel-governance'),
  TEMPORAL_CLI: z.preprocess(blankAsUnset, z.string().optional()),
  TEMPORAL_WORKFLOW_BUNDLE: z.preprocess(blankAsUnset, z.string().optional()),
  NATS_PREFIX: z.string().regex(/^[A-Za-z0-9_-]+$/).default('nettel'),
  ROLES: z
    .string()
    .default(processRoles.join(','))
    .transform((v) => v.split(',').map((r) => r.trim()).filter(Boolean))
    .pipe(z.array(z.enum(processRoles)).min(1)),
  BODY_LIMIT_BYTES: z.coerce.number().int().positive().default(10 * 1024 * 1024),
  HTTP_HEADERS_TIMEOUT_MS: z.coerce.number().int().min(100).max(600_000).default(20_000),
  HTTP_REQUEST_TIMEOUT_MS: z.coerce.number().int().min(100).max(3_600_000).default(120_000),
  HTTP_KEEP_ALIVE_TIMEOUT_MS: z.coerce.number().int().min(100).max(600_000).default(65_000),
  HTTP_MAX_CONNECTIONS: z.coerce.number().int().min(1).max(1_000_000).default(10_000),
  AUTH_FAILURES_PER_MINUTE: z.coerce.number().int().min(0).default(20),
  METRICS_TOKEN: z.preprocess(blankAsUnset, z.string().min(32, 'METRICS_TOKEN must be at least 32 characters').optional()),
  TRUSTED_PROXIES: z.string().default('').transform(commaList).refine(validProxies, 'TRUSTED_PROXIES: addresses or CIDR ranges, comma-separated'),
  LOG_LEVEL: z.enum(['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent']).default('info'),
  EMBEDDED_NATS_PORT: z.coerce.number().int().min(1).max(65535).default(14222),
  EMBEDDED_TEMPORAL_PORT: z.coerce.number().int().min(1).max(65535).default(17233),
  EMBEDDED_TEMPORAL_UI_PORT: z.coerce.number().int().min(1).max(65535).default(18233),
  ENGINE_CHECK_INTERVAL_MS: z.coerce.number().int().min(50).max(60_000).default(500),
  ENGINE_RESTART_BACKOFF_MS: z.coerce.number().int().min(10).max(60_000).default(500),
  ENGINE_RESTART_MAX_BACKOFF_MS: z.coerce.number().int().min(10).max(600_000).default(30_000),
  ENGINE_LIVENESS_FAIL_AFTER_MS: z.coerce.number().int().min(1000).max(3_600_000).default(20_000),
  TEMPORAL_UI_URL: optionalUrl,
  CONSOLE_DIR: z.string().default('dist/console'),
  TOOLS_DIR: z.string().optional(),
  XDG_CACHE_HOME: z.string().optional(),
  HOME: z.string().optional(),
  PATH: z.string().default('/usr/local/bin:/usr/bin:/bin'),
  NATS_STREAM_MAX_BYTES: z.coerce.number().int().positive().default(8 * 1024 ** 3),
  NATS_REPLICAS: z.coerce.number().int().min(1).max(5).default(1),
  NATS_SERVER: z.preprocess(blankAsUnset, z.string().optional()),
  EMBEDDED_NATS_MAX_FILE_STORE: z.coerce.number().int().positive().default(20 * 1024 ** 3),
  NATS_ACK_WAIT_MS: z.coerce.number().int().min(1000).max(600_000).default(30_000),
  WORKER_MAX_MESSAGES: z.coerce.number().int().min(1).max(10_000).default(256),
  WORKER_MAX_WAIT_MS: z.coerce.number().int().min(1).max(60_000).default(200),
  WORKER_MAX_BATCH_BYTES: z.coerce.number().int().min(1024).max(1024 ** 3).default(32 * 1024 ** 2),
  WORKER_MAX_DELIVERIES: z.coerce.number().int().min(1).max(1_000).default(10),
  NATS_DEAD_LETTER_MAX_BYTES: z.coerce.number().int().positive().default(1024 ** 3),
  RATE_LIMIT_RECORDS_PER_SECOND: z.coerce.number().min(0).default(0),
  RATE_LIMIT_BURST_SECONDS: z.coerce.number().positive().max(3600).default(2),
  ANALYTICS_MAX_EXECUTION_SECONDS: z.coerce.number().int().min(0).max(3600).default(defaultQueryLimits.maxExecutionSeconds),
  ANALYTICS_MAX_MEMORY_BYTES: z.coerce.number().int().min(0).default(defaultQueryLimits.maxMemoryBytes),
  ANALYTICS_MAX_ROWS_TO_READ: z.coerce.number().int().min(0).default(defaultQueryLimits.maxRowsToRead),
  ANALYTICS_MAX_RANGE_DAYS: z.coerce.number().int().min(1).max(366).default(rollupRangeDays),
  ANALYTICS_MAX_RAW_RANGE_DAYS: z.coerce.number().int().min(1).max(31).default(rawRangeDays),
  QUERY_BUDGET_UNITS_PER_MINUTE: z.coerce.number().min(0).default(120),
  QUERY_BUDGET_BURST_UNITS: z.coerce.number().min(1).default(120),
  AUDIT_VERIFY_MAX_ENTRIES: z.coerce.number().int().min(1).max(1_000_000).default(50_000),
  AUDIT_CHAIN_KEY: z.preprocess(blankAsUnset, z.string().min(32, 'AUDIT_CHAIN_KEY must be at least 32 characters').optional()),
  REPLAY_MAX_WINDOW_MINUTES: z.coerce.number().int().min(1).max(maxReplayWindowMinutes).default(1440),
  COLLECTOR_HOST: z.preprocess(blankAsUnset, z.string().optional()),
  COLLECTOR_NETFLOW_PORT: z.coerce.number().int().min(1).max(65535).default(2055),
  COLLECTOR_SFLOW_PORT: z.coerce.number().int().min(1).max(65535).default(6343),
  COLLECTOR_METRICS_PORT: z.coerce.number().int().min(0).max(65535).default(0),
  COLLECTOR_WORKERS: z.coerce.number().int().min(1).max(64).default(2),
  COLLECTOR_QUEUE_SIZE: z.coerce.number().int().min(1).max(10_000_000).default(100_000),
  COLLECTOR_REGISTRY_REFRESH_MS: z.coerce.number().int().min(100).max(600_000).default(2_000),
  GOFLOW2: z.preprocess(blankAsUnset, z.string().optional()),
  RETENTION_DAYS: z.coerce.number().int().min(1).max(3650).default(30),
  RETENTION_1M_DAYS: z.coerce.number().int().min(1).max(3650).default(30),
  RETENTION_5M_DAYS: z.coerce.number().int().min(1).max(3650).default(90),
  RETENTION_1H_DAYS: z.coerce.number().int().min(1).max(3650).default(400),
  WEBHOOK_ALLOWED_HOSTS: z.string().default(''),
  WEBHOOK_SECRETS_KEY: z.preprocess(blankAsUnset, z.string().min(16, 'WEBHOOK_SECRETS_KEY must be at least 16 characters').optional()),
  WEBHOOK_SECRETS_PREVIOUS_KEYS: z.string().default('').transform(commaList),
  WEBHOOK_TIMEOUT_MS: z.coerce.number().int().min(100).max(60_000).default(10_000),
  WEBHOOK_MAX_RESPONSE_BYTES: z.coerce.number().int().min(0).max(10 * 1024 * 1024).default(64 * 1024),
  WEBHOOK_RETRY_BASE_MS: z.coerce.number().int().min(10).max(3_600_000).default(5_000),
  WEBHOOK_RETRY_MAX_MS: z.coerce.number().int().min(10).max(86_400_000).default(3_600_000),
  WEBHOOK_RETRY_FOR_MS: z.coerce.number().int().min(1_000).max(30 * 86_400_000).default(86_400_000),
  WEBHOOK_CONCURRENCY: z.coerce.number().int().min(1).max(1_000).default(64),
  WEBHOOK_MAX_PER_WORKSPACE: z.coerce.number().int().min(1).max(10_000).default(20),
  WEBHOOK_TEST_SENDS_PER_MINUTE: z.coerce.number().int().min(1).max(10_000).default(10),
  REPLAY_RECONCILE_INTERVAL_MS: z.coerce.number().int().min(100).max(3_600_000).default(10_000),
  REPLAY_RECONCILE_GRACE_MS: z.coerce.number().int().min(0).max(3_600_000).default(15_000),
  REPLAY_START_FAIL_AFTER_MS: z.coerce.number().int().min(0).max(86_400_000).default(30_000),
  DECISION_SIGNING_KEY: z.preprocess(blankAsUnset, z.string().min(decisionSigningKeyMinLength, `DECISION_SIGNING_KEY must be at least ${decisionSigningKeyMinLength} characters`).optional()),
});

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

type Env = z.infer<typeof envSchema>;

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

function natsConfig(e: z.infer<typeof envSchema>): Config['nats'] {
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
