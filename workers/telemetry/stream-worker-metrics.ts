import { counter, engineErrorsCounter, histogram, type Registry } from '../../observability/metrics';

/**
 * What the stream workers count: rows written, rows checked and duplicates skipped, rollups repaired, batches by
 * outcome, write failures by class, dead letters and their refusals, re-opens of the consumer, and how long and how large
 * each ClickHouse insert is. (The consumer's backlog is measured on scrape
 * by streams/consumer-lag.)
 */
export const streamWorkerMetrics = (registry: Registry) => ({ ...writeMetrics(registry), ...deliveryMetrics(registry), engineErrors: engineErrorsCounter(registry) });

/** What the writes to ClickHouse did: rows written, checked and skipped, rollups repaired, and each insert's time and size. */
const writeMetrics = (registry: Registry) => ({
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
  rollupRepairs: counter(registry, {
    name: 'nettel_worker_rollup_repairs_total',
    help: 'Writes of flows found stored but missing from a rollup (cut between their parts by a crash), by rollup and outcome: refed from the stored flows, or partial (held in part; not repairable, logged)',
    labelNames: ['table', 'outcome'] as const,
  }),
  rowsChecked: counter(registry, {
    name: 'nettel_worker_rows_checked_total',
    help: 'Rows that may be stored already (redelivered, retried or sent with an Idempotency-Key), looked up before writing, by table and by how: a whole request at once or id by id',
    labelNames: ['table', 'by'] as const,
  }),
  writeSeconds: histogram(registry, {
    name: 'nettel_worker_clickhouse_write_seconds',
    help: 'Time of one successful ClickHouse insert by a stream worker, by table',
    labelNames: ['table'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
  }),
  writeRows: histogram(registry, {
    name: 'nettel_worker_write_batch_rows',
    help: 'Rows in one ClickHouse insert by a stream worker, by table',
    labelNames: ['table'] as const,
    buckets: [1, 10, 100, 500, 1_000, 5_000, 10_000, 50_000, 100_000, 500_000],
  }),
});

/** What became of the messages: batches by outcome, failures, refusals, dead letters, re-opens of the consumer. */
const deliveryMetrics = (registry: Registry) => ({
  batches: counter(registry, {
    name: 'nettel_worker_batches_total',
    help: 'Batches the stream workers processed, by outcome',
    labelNames: ['outcome'] as const,
  }),
  deadLetters: counter(registry, {
    name: 'nettel_worker_dead_letters_total',
    help: 'Messages moved to the dead-letter stream after ClickHouse kept refusing them',
  }),
  messagesRefused: counter(registry, {
    name: 'nettel_worker_messages_refused_total',
    help: 'Messages refused before any write because they are not telemetry as the service publishes it (a forged or corrupt publish), by reason; each goes to the dead-letter stream',
    labelNames: ['reason'] as const,
  }),
  deadLetterRefusals: counter(registry, {
    name: 'nettel_worker_dead_letter_refusals_total',
    help: 'Messages the dead-letter stream refused (full or unreachable): left unacknowledged in the telemetry stream',
  }),
  writeFailures: counter(registry, {
    name: 'nettel_worker_write_failures_total',
    help: 'Messages whose write failed on their own, by class (transient, permanent, unknown) and reason',
    labelNames: ['class', 'reason'] as const,
  }),
  restRetries: counter(registry, {
    name: 'nettel_worker_rest_retries_total',
    help: 'Times the rest of a written batch (derived signals, incidents, the detectors\' copy) failed for a transient reason and was run again whole, by reason',
    labelNames: ['reason'] as const,
  }),
  consumeRestarts: counter(registry, {
    name: 'nettel_worker_consume_restarts_total',
    help: 'Times a stream worker re-opened its consumer after consuming stopped, by reason',
    labelNames: ['reason'] as const,
  }),
});

export type StreamWorkerMetrics = ReturnType<typeof streamWorkerMetrics>;
