import { Counter, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/**
 * Everything that moves gets a counter. One registry per process, created at
 * wiring time and handed to the components that count.
 */
export function createMetrics() {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  return {
    registry,
    httpRequests: new Counter({
      name: 'nettel_http_requests_total',
      help: 'HTTP requests by route, method and status',
      labelNames: ['method', 'route', 'status'] as const,
      registers: [registry],
    }),
    httpErrors: new Counter({
      name: 'nettel_http_errors_total',
      help: 'HTTP error answers by error code',
      labelNames: ['code'] as const,
      registers: [registry],
    }),
    httpDuration: new Histogram({
      name: 'nettel_http_request_duration_seconds',
      help: 'HTTP request duration by route',
      labelNames: ['route'] as const,
      buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
      registers: [registry],
    }),
    engineErrors: new Counter({
      name: 'nettel_engine_errors_total',
      help: 'Failed calls to an engine (nats, clickhouse, temporal) by operation',
      labelNames: ['engine', 'operation'] as const,
      registers: [registry],
    }),
    authFailures: new Counter({
      name: 'nettel_auth_failures_total',
      help: 'Rejected credentials by reason',
      labelNames: ['reason'] as const,
      registers: [registry],
    }),
    telemetryAccepted: new Counter({
      name: 'nettel_telemetry_accepted_total',
      help: 'Telemetry records acknowledged by JetStream, by kind',
      labelNames: ['kind'] as const,
      registers: [registry],
    }),
    telemetryRejected: new Counter({
      name: 'nettel_telemetry_rejected_records_total',
      help: 'Telemetry records refused by validation, by kind',
      labelNames: ['kind'] as const,
      registers: [registry],
    }),
    rowsWritten: new Counter({
      name: 'nettel_worker_rows_written_total',
      help: 'Rows the stream workers wrote to ClickHouse, by table',
      labelNames: ['table'] as const,
      registers: [registry],
    }),
    duplicatesSkipped: new Counter({
      name: 'nettel_worker_duplicate_rows_skipped_total',
      help: 'Redelivered rows already in ClickHouse, skipped',
      labelNames: ['table'] as const,
      registers: [registry],
    }),
    workerBatches: new Counter({
      name: 'nettel_worker_batches_total',
      help: 'Batches the stream workers processed, by outcome',
      labelNames: ['outcome'] as const,
      registers: [registry],
    }),
    deadLetters: new Counter({
      name: 'nettel_worker_dead_letters_total',
      help: 'Messages moved to the dead-letter stream after ClickHouse kept refusing them',
      registers: [registry],
    }),
    incidentsWritten: new Counter({
      name: 'nettel_incidents_written_total',
      help: 'Incident versions written by the correlator',
      registers: [registry],
    }),
    rateLimited: new Counter({
      name: 'nettel_rate_limited_requests_total',
      help: 'Ingest requests refused with 429 because their workspace was over its record rate',
      registers: [registry],
    }),
    auditAppends: new Counter({
      name: 'nettel_audit_appends_total',
      help: 'Audit ledger entries appended',
      registers: [registry],
    }),
  };
}

export type Metrics = ReturnType<typeof createMetrics>;
