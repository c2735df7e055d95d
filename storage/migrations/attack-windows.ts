import type { Migration } from './migration';

/**
 * The rate detectors' decisions with the attack's details
 * (core/detection/attack-details.ts), one row per decision: the incident
 * answer reads its target's rows over its span (type, peak and current
 * rates, breakdown, top sources, ports, packet sizes, exporters). A new
 * table rather than columns of `signals`: a decision's details are a few
 * KB of nested lists that only the incident answer reads, and the signals
 * table is scanned by every correlation. The same DDL on every generation
 * (Strings, UInt and epoch milliseconds; the nested lists as JSON text, read
 * whole and never filtered on). ReplacingMergeTree keyed by the signal's
 * id: a decision written again (a redelivery, a second detector) is one row
 * once read with FINAL.
 */
export const attackWindowMigrations: Migration[] = [
  {
    id: '0061_attack_windows',
    statements: ({ db }) => [
      `CREATE TABLE IF NOT EXISTS ${db}.attack_windows (
        org_id String, event_id String, scope String, target String, host_group String, window_end Int64,
        type String, vector String, detector_version UInt32, rules_version UInt64, rates String, details String, created_at Int64
      ) ENGINE = ReplacingMergeTree ORDER BY (org_id, target, window_end, event_id)`,
    ],
  },
];
