import type { Migration } from './migration';

/**
 * Webhook subscriptions and their delivery log, the same DDL on every
 * generation (Strings and epoch milliseconds in Int64).
 *
 * `webhooks` holds versioned rows like exporters: a change, a deletion or a
 * status change writes the next version, the highest wins.
 *
 * `webhook_deliveries` holds one row per attempt, the attempt number as the
 * version: one event's delivery to one subscription reads as its latest
 * attempt once merged (FINAL).
 */
export const webhookMigrations: Migration[] = [
  {
    id: '0015_webhooks',
    statements: ({ db }) => [
      `CREATE TABLE IF NOT EXISTS ${db}.webhooks (
        org_id String, id String, url String, events String, description String, secret String,
        status String, created_at Int64, updated_at Int64, failing_since Int64, version UInt64
      ) ENGINE = ReplacingMergeTree(version) ORDER BY (org_id, id)`,
      `CREATE TABLE IF NOT EXISTS ${db}.webhook_deliveries (
        org_id String, webhook_id String, event_id String, event_type String, status String, attempts UInt32,
        response_code UInt16, latency_ms UInt32, error String, first_attempt_at Int64, last_attempt_at Int64,
        next_attempt_at Int64
      ) ENGINE = ReplacingMergeTree(attempts) ORDER BY (org_id, webhook_id, event_id)`,
    ],
  },
];
