import type { Migration } from './migration';

/**
 * The exporter registry, the same DDL on every generation (Strings, UInt*
 * and epoch milliseconds in Int64, which 18.16 has).
 *
 * `exporters` holds versioned rows like policies: a change, a decision of
 * the platform admin or a deletion writes the next version, the highest
 * wins. `status` is a String, so the statuses approvals brought (`pending`,
 * `rejected`: core/exporter.ts) needed no change here; rows written before
 * them say `active` and stay so.
 *
 * `unknown_exporters` holds one row per address and minute, summed by
 * SummingMergeTree. First and last seen are the smallest and largest minute
 * of an address, taken at read time: a merge only ever adds up rows of the
 * same address and minute, so sum, min and max stay exact whatever merged,
 * without AggregateFunction columns 18.16 handles poorly and the cluster DDL
 * does not replicate. The cost is minute resolution for the two times, and
 * at most one row per address a minute.
 */
export const exporterMigrations: Migration[] = [
  {
    id: '0012_exporters',
    statements: ({ db }) => [
      `CREATE TABLE IF NOT EXISTS ${db}.exporters (
        org_id String, id String, address String, name String, sampling_rate UInt32,
        status String, created_at Int64, updated_at Int64, version UInt64
      ) ENGINE = ReplacingMergeTree(version) ORDER BY (org_id, id)`,
      `CREATE TABLE IF NOT EXISTS ${db}.unknown_exporters (
        address String, minute Int64, datagrams UInt64, flows UInt64
      ) ENGINE = SummingMergeTree((datagrams, flows)) ORDER BY (address, minute)`,
    ],
  },
];
