import type { Dialect } from '../dialect';
import type { MigrationContext } from './migration';

/**
 * The flow tables as each generation stores them (see storage/dialect.ts):
 * the same columns, the dialect's types, codecs and retention. Shared by the
 * migration that creates them and the one that converts older ones.
 */
export function flowsTable({ db, dialect: d, retention }: MigrationContext, name = 'flows'): string {
  // Codecs as measured on 1M realistic flows (about 19 bytes a flow): event times grow within a part, so
  // Delta; the receive time is constant per message, so plain ZSTD; addresses gain most from a higher level.
  // The event-id bloom filter keeps the duplicate check of a retried or redelivered message off the column itself.
  const time = `${d.timeType} ${d.codec('Delta, ZSTD(1)')}`;
  const receivedAt = `${d.timeType} ${d.codec('ZSTD(1)')}`;
  const address = `${d.addressType} ${d.codec('ZSTD(3)')}`;
  const port = `UInt16 ${d.codec('ZSTD(1)')}`;
  const counter = `UInt64 ${d.codec('T64, ZSTD(1)')}`;
  return `CREATE TABLE IF NOT EXISTS ${db}.${name} (
        org_id ${d.labelType}, ts ${time}, received_at ${receivedAt}, event_id String ${d.codec('ZSTD(1)')},
        src_ip ${address}, dst_ip ${address}, src_port ${port}, dst_port ${port}, protocol ${d.labelType},
        bytes ${counter}, packets ${counter}
        ${d.skipIndex('event_id_bloom event_id TYPE bloom_filter(0.05) GRANULARITY 4')}
      ) ENGINE = MergeTree PARTITION BY ${d.dayOf('ts')} ORDER BY (org_id, ts) ${d.ttl('ts', retention.raw)}`;
}

export interface Rollup {
  table: string;
  seconds: number;
  /** The table whose rows feed it: the raw flows, or the next finer rollup. */
  from: string;
  retentionDays(ctx: MigrationContext): number;
}

/** Traffic per destination and protocol, and per source alone, at 1 minute, 5 minutes and 1 hour. */
export const destinationRollups: Rollup[] = [
  { table: 'flows_1m', seconds: 60, from: 'flows', retentionDays: (c) => c.retention.minute },
  { table: 'flows_5m', seconds: 300, from: 'flows_1m', retentionDays: (c) => c.retention.fiveMinutes },
  { table: 'flows_1h', seconds: 3600, from: 'flows_5m', retentionDays: (c) => c.retention.hour },
];
export const sourceRollups: Rollup[] = [
  { table: 'flows_src_1m', seconds: 60, from: 'flows', retentionDays: (c) => c.retention.minute },
  { table: 'flows_src_5m', seconds: 300, from: 'flows_src_1m', retentionDays: (c) => c.retention.fiveMinutes },
  { table: 'flows_src_1h', seconds: 3600, from: 'flows_src_5m', retentionDays: (c) => c.retention.hour },
];

/**
 * Traffic by the dimensions analysts group by, no addresses and no ports
 * (docs/enrichment.md): the exporter and its interfaces (so interface and
 * exporter names and classes are joined in when read, as on the raw flows),
 * AS numbers, countries, protocol and the workspace's network names. Ports
 * and addresses would make nearly every flow a row of its own; these keys
 * fold flows many to one (measured in docs/enrichment.md). Two levels, both
 * folded from closed buckets (storage/rollup-fold.ts, migration 0063): the
 * 5-minute one from the raw flows, the hourly one from the 5-minute one. A
 * view on every insert cost the insert more than the reads saved (migration
 * 0049 kept the hourly view only; 0063 drops it too); the raw flows answer a
 * query's edges and its buckets not folded yet.
 */
export const dimensionRollups: Rollup[] = [
  { table: 'flows_dims_5m', seconds: 300, from: 'flows', retentionDays: (c) => c.retention.fiveMinutes },
  { table: 'flows_dims_1h', seconds: 3600, from: 'flows_dims_5m', retentionDays: (c) => c.retention.hour },
];
export const dimensionKeys = [
  'exporter', 'in_if', 'out_if', 'protocol', 'src_as', 'dst_as', 'src_country', 'dst_country', 'src_net_name', 'dst_net_name',
] as const;

/** The columns a rollup is keyed by beside its workspace and bucket. */
export const keyColumns = (r: Rollup): string[] =>
  r.table.startsWith('flows_src_') ? ['src_ip'] : r.table.startsWith('flows_dims_') ? [...dimensionKeys] : ['dst_ip', 'protocol'];

/** A key's column type, as the raw flows store it. */
type KeyKind = 'address' | 'number' | 'label';
const keyKind = (k: string): KeyKind =>
  k === 'src_ip' || k === 'dst_ip' || k === 'exporter' ? 'address' : ['in_if', 'out_if', 'src_as', 'dst_as'].includes(k) ? 'number' : 'label';
const keyType = (d: Dialect, k: string) => ({ address: d.addressType, number: 'UInt32', label: d.labelType })[keyKind(k)];
/** A key's empty value, which a receipt row carries. */
const noKey = (d: Dialect, k: string) => ({ address: d.noAddress, number: 'toUInt32(0)', label: "''" })[keyKind(k)];

/** `writeId`: the table keeps receipts (write_id in its key); rollups created before receipts gain it in migration 0017. */
export function rollupTable(ctx: MigrationContext, r: Rollup, name = r.table, writeId = false): string {
  const { db, dialect: d } = ctx;
  const keys = [...keyColumns(r), ...(writeId ? ['write_id'] : [])];
  const keyDdl = keys.map((k) => (k === 'write_id' ? `write_id UInt64 ${d.codec('ZSTD(1)')}` : `${k} ${keyType(d, k)}`)).join(', ');
  const counter = `UInt64 ${d.codec('T64, ZSTD(1)')}`;
  return `CREATE TABLE IF NOT EXISTS ${db}.${name} (
        org_id ${d.labelType}, minute ${d.bucketType} ${d.codec('DoubleDelta, ZSTD(1)')}, ${keyDdl},
        bytes ${counter}, packets ${counter}, flows ${counter}
      ) ENGINE = SummingMergeTree((bytes, packets, flows)) PARTITION BY ${d.bucketDayOf('minute')}
        ORDER BY (org_id, minute, ${keys.join(', ')}) ${d.ttl('minute', r.retentionDays(ctx))}`;
}

/**
 * The view that feeds a rollup. On current ClickHouse a coarser rollup is fed
 * by the next finer one (a cascade, so each insert into flows is aggregated
 * once per key), through a subquery so no alias shadows the source's own
 * `minute`. 18.16 only substitutes a view's source in a flat SELECT: there
 * every rollup is fed by the raw flows.
 */
export function rollupView(ctx: MigrationContext, r: Rollup): string {
  const { db, dialect: d } = ctx;
  const keys = keyColumns(r).join(', ');
  const head = `CREATE MATERIALIZED VIEW IF NOT EXISTS ${db}.${r.table}_mv TO ${db}.${r.table} AS`;
  if (d.generation === 'legacy' || r.from === 'flows') {
    return `${head}
        SELECT org_id, ${d.bucketOf('ts', r.seconds)} AS minute, ${keys}, sum(bytes) AS bytes, sum(packets) AS packets, count() AS flows
        FROM ${db}.flows GROUP BY org_id, minute, ${keys}`;
  }
  return `${head}
        SELECT org_id, bucket AS minute, ${keys}, bytes, packets, flows FROM (
          SELECT org_id, ${d.bucketOf('minute', r.seconds)} AS bucket, ${keys}, sum(bytes) AS bytes, sum(packets) AS packets, sum(flows) AS flows
          FROM ${db}.${r.from} GROUP BY org_id, bucket, ${keys})`;
}

/** The rollups keyed by addresses, which migration 0017 gave receipts (the dimension rollups are created with them). */
export const addressRollups: Rollup[] = [...destinationRollups, ...sourceRollups];
/**
 * The flow rollups an insert of flows feeds through views: the minute levels
 * by destination and by source. Every coarser level is folded from closed
 * buckets (storage/rollup-fold.ts): by destination and by source since
 * migration 0062, by dimension since 0063.
 */
export const viewFedRollups: Rollup[] = [destinationRollups[0]!, sourceRollups[0]!];

/**
 * A rollup's rows from raw flows, with its receipts: beside the rows of each
 * bucket and key (`write_id` 0), one row per write of flows that says how
 * many flows it held, filed under no workspace (`org_id` '', which no
 * workspace's query reads) at the server's time. A receipt lands in the same
 * part as the rows it vouches for, so a rollup holds a write's receipt
 * exactly when it holds that write's rows (see storage/rollup-repair.ts).
 * `source` is the flows table, or a subquery of it. 18.16 takes a flat
 * SELECT only, where every row goes twice through the aggregation (once as a
 * receipt); current ClickHouse computes both in one pass (GROUPING SETS).
 */
export function rollupFromFlows(ctx: Pick<MigrationContext, 'db' | 'dialect'>, r: Rollup, source = `${ctx.db}.flows`): string {
  const d = ctx.dialect;
  const keys = keyColumns(r);
  const receiptTime = d.bucketOf(d.nowTime, r.seconds);
  if (d.generation === 'legacy') {
    return `SELECT if(receipt = 1, '', org_id) AS org_id, if(receipt = 1, ${receiptTime}, ${d.bucketOf('ts', r.seconds)}) AS minute,
          ${keys.map((k) => `if(receipt = 1, ${noKey(d, k)}, ${k}) AS ${k}`).join(', ')}, if(receipt = 1, write_id, toUInt64(0)) AS write_id,
          sum(if(receipt = 1, 0, bytes)) AS bytes, sum(if(receipt = 1, 0, packets)) AS packets, count() AS flows
        FROM ${source} ARRAY JOIN [0, 1] AS receipt GROUP BY org_id, minute, ${keys.join(', ')}, write_id`;
  }
  return `SELECT org_id, if(write_id = 0, bucket, ${receiptTime}) AS minute, ${keys.join(', ')}, write_id, bytes, packets, flows FROM (
          SELECT org_id, ${d.bucketOf('ts', r.seconds)} AS bucket, ${keys.join(', ')}, write_id, sum(bytes) AS bytes, sum(packets) AS packets, count() AS flows
          FROM ${source} GROUP BY GROUPING SETS ((org_id, bucket, ${keys.join(', ')}), (write_id)) HAVING write_id != 0 OR org_id != '')`;
}

/**
 * The view that feeds a rollup and its receipts: from the raw flows, or on
 * current ClickHouse from the next finer rollup, whose receipts pass through
 * as they are (each write keeps its own row).
 */
export function receiptRollupView(ctx: MigrationContext, r: Rollup): string {
  const { db, dialect: d } = ctx;
  const head = `CREATE MATERIALIZED VIEW IF NOT EXISTS ${db}.${r.table}_mv TO ${db}.${r.table} AS`;
  if (d.generation === 'legacy' || r.from === 'flows') return `${head}\n        ${rollupFromFlows(ctx, r)}`;
  const keys = keyColumns(r).join(', ');
  return `${head}
        SELECT org_id, bucket AS minute, ${keys}, write_id, bytes, packets, flows FROM (
          SELECT org_id, ${d.bucketOf('minute', r.seconds)} AS bucket, ${keys}, write_id, sum(bytes) AS bytes, sum(packets) AS packets, sum(flows) AS flows
          FROM ${db}.${r.from} GROUP BY org_id, bucket, ${keys}, write_id)`;
}
