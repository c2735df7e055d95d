import { counter, engineErrorsCounter, type Registry } from '../observability/metrics';

/** What the stream workers count: rows written, duplicates skipped, batches by outcome, dead letters. */
export const streamWorkerMetrics = (registry: Registry) => ({
  rowsWritten: counter(registry, {
    name: 'nettel_worker_rows_written_total',
    help: 'Rows the stream workers wrote to ClickHouse, by table',
    labelNames: ['table'] as const,
  }),
  duplicatesSkipped: counter(registry, {
    name: 'nettel_worker_duplicate_rows_skipped_total',
    help: 'Redelivered rows already in ClickHouse, skipped',
    labelNames: ['table'] as const,
  }),
  batches: counter(registry, {
    name: 'nettel_worker_batches_total',
    help: 'Batches the stream workers processed, by outcome',
    labelNames: ['outcome'] as const,
  }),
  deadLetters: counter(registry, {
    name: 'nettel_worker_dead_letters_total',
    help: 'Messages moved to the dead-letter stream after ClickHouse kept refusing them',
  }),
  engineErrors: engineErrorsCounter(registry),
});

export type StreamWorkerMetrics = ReturnType<typeof streamWorkerMetrics>;
