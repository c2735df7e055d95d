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
    auditAppends: new Counter({
      name: 'nettel_audit_appends_total',
      help: 'Audit ledger entries appended',
      registers: [registry],
    }),
  };
}

export type Metrics = ReturnType<typeof createMetrics>;
