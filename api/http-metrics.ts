import { counter, histogram, type Registry } from '../observability/metrics';

/** The HTTP layer's metrics: every request, every error answer, every duration. */
export const httpMetrics = (registry: Registry) => ({
  requests: counter(registry, {
    name: 'nettel_http_requests_total',
    help: 'HTTP requests by route, method and status',
    labelNames: ['method', 'route', 'status'] as const,
  }),
  errors: counter(registry, {
    name: 'nettel_http_errors_total',
    help: 'HTTP error answers by error code',
    labelNames: ['code'] as const,
  }),
  duration: histogram(registry, {
    name: 'nettel_http_request_duration_seconds',
    help: 'HTTP request duration by route',
    labelNames: ['route'] as const,
    buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
  }),
});

export type HttpMetrics = ReturnType<typeof httpMetrics>;
