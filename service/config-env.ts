import { z } from 'zod';
import { TrustedProxies } from '../core/client-address';
import { decisionSigningKeyMinLength } from '../core/decision-token';
import { rawRangeDays, rollupRangeDays } from '../core/flow-query';
import { maxReplayWindowMinutes } from '../core/replay';
import { engineAccessEnv } from './engine-access';
import { defaultQueryLimits } from '../storage/query-limits';

/** The environment variables the service reads, with their defaults and rules; service/config.ts maps them to the typed Config. */
export const processRoles = ['api', 'stream-workers', 'temporal-worker', 'collector'] as const;
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

export const envSchema = z.object({
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

export type Env = z.infer<typeof envSchema>;
