import type { ClickHouse } from '../storage/clickhouse';
import { str } from '../storage/sql';
import { RollupFold } from '../storage/rollup-fold';

/**
 * Flows seeded straight into ClickHouse with `INSERT … SELECT FROM numbers()`,
 * not through the API: the query scenario needs months of history that the
 * API would take hours to accept. The rows go into the service's own `flows`
 * table, so the rollups are filled by the materialized views exactly as the
 * service's schema defines them.
 *
 * The traffic is one workspace's: 5,000 sources (10.0.x.x) and 2,000
 * destinations (172.20.x.x), each drawn as the cube of a uniform number so a
 * few addresses carry most of the traffic, as top talkers do; three protocols
 * (tcp 5/8, udp 2/8, icmp 1/8), eight service ports, ephemeral source ports.
 * Times are evenly spread and increase with `number`, so each statement
 * (about a day of rows) writes one or two daily partitions. The SQL is
 * current ClickHouse's (IPv6, DateTime64): the seed is not written for 18.16.
 *
 * Enrichment as the service stores it, skewed and correlated as an edge
 * network's traffic is: sources in blocks of 250 addresses per AS (20 ASes,
 * the busiest sources in the first ones; the last block unknown: AS 0, no
 * country), each AS in one of seven countries; destinations in four of the
 * workspace's own ASes (blocks of 500) and three of its networks (dc-ams NL,
 * dc-fra DE, office NL). Eight exporters (192.0.2.1-8): an AS's traffic
 * enters at its edge router (a quarter at the next one) through one of two
 * uplinks its AS is routed over (12 uplinks, ifIndex 1-12), and leaves by one
 * of four ports of its destination network (ifIndex 13-24). The dimension
 * rollups are filled by their views.
 */
export interface SeedPlan {
  flows: number;
  orgId: string;
  /** Epoch ms of the first and the last flow. */
  from: number;
  to: number;
}

export const seedSources = 5_000;
export const seedDestinations = 2_000;
const day = 86_400_000;

/** A deterministic uniform number in [0, 1) per row and salt. */
const uniform = (salt: number) => `(sipHash64(number, ${salt}) % 1000003) / 1000003`;
/** The index of a row's source and destination address (a few indices carry most rows). */
const sourceIndex = `toUInt32(pow(${uniform(1)}, 3) * ${seedSources})`;
const destinationIndex = `toUInt32(pow(${uniform(2)}, 3) * ${seedDestinations})`;
/** A row's source AS (0-19) and destination network (0-2), by block of addresses. */
const sourceAs = `intDiv(${sourceIndex}, 250)`;
const destinationNetwork = `intDiv(${destinationIndex}, 667)`;
/** A small deterministic choice per row and salt: 0 to n-1. */
const choice = (salt: number, n: number) => `(sipHash64(number, ${salt}) % ${n})`;
const sourceAses = [13335, 15169, 16509, 8075, 32934, 3320, 7018, 174, 2914, 6939, 3356, 1299, 20940, 24940, 16276, 12876, 9009, 4134, 4837, 0];
const sourceCountries = ['US', 'US', 'US', 'US', 'US', 'DE', 'US', 'US', 'US', 'US', 'US', 'SE', 'NL', 'DE', 'FR', 'FR', 'GB', 'CN', 'CN', ''];
const list = (items: ReadonlyArray<string | number>) => `[${items.map((i) => (typeof i === 'number' ? String(i) : str(i))).join(', ')}]`;

/** The SELECT of rows `start` to `start + count` of the plan, in the flows table's column order. */
export function seedSelect(plan: SeedPlan, start: number, count: number): string {
  const span = plan.to - plan.from;
  const h = 'sipHash64(number)';
  return `SELECT ${str(plan.orgId)} AS org_id,
      fromUnixTimestamp64Milli(toInt64(${plan.from} + intDiv(number * ${span}, ${Math.max(1, plan.flows - 1)}))) AS ts,
      ts + toIntervalMillisecond(150 + ${h} % 400) AS received_at,
      concat('evt_', lower(hex(sipHash64(intDiv(number, 5000), 7))), leftPad(lower(hex(toUInt32(number % 5000))), 6, '0')) AS event_id,
      toIPv6(toIPv4(toUInt32(167772160 + ${sourceIndex}))) AS src_ip,
      toIPv6(toIPv4(toUInt32(2886991872 + ${destinationIndex}))) AS dst_ip,
      toUInt16(32768 + ${h} % 28000) AS src_port,
      toUInt16([443, 80, 53, 22, 8080, 123, 3306, 5432][1 + ${h} % 8]) AS dst_port,
      ['tcp', 'tcp', 'tcp', 'tcp', 'tcp', 'udp', 'udp', 'icmp'][1 + intDiv(${h}, 8) % 8] AS protocol,
      toUInt64(64 + intDiv(${h}, 64) % 14000) AS bytes,
      toUInt64(1 + intDiv(${h}, 1024) % 40) AS packets,
      toIPv6(toIPv4(toUInt32(3221225985 + (${sourceAs} + (${choice(3, 4)} = 0)) % 8))) AS exporter,
      toUInt32(1 + (${sourceAs} % 6) * 2 + ${choice(4, 2)}) AS in_if,
      toUInt32(13 + ${destinationNetwork} * 4 + ${choice(5, 4)}) AS out_if,
      toUInt32(${list(sourceAses)}[1 + ${sourceAs}]) AS src_as,
      toUInt32(64500 + intDiv(${destinationIndex}, 500)) AS dst_as,
      ${list(sourceCountries)}[1 + ${sourceAs}] AS src_country,
      ${list(['NL', 'DE', 'NL'])}[1 + ${destinationNetwork}] AS dst_country,
      ${list(['dc-ams', 'dc-fra', 'office'])}[1 + ${destinationNetwork}] AS dst_net_name
    FROM numbers(${start}, ${count})`;
}

/**
 * Seeds the plan into `ch`'s flows table one day of rows per statement, the
 * views in parallel, folds the 5-minute and hourly levels; then waits (up to `settleMs`) for the background merges
 * the inserts started, so the service starts on a folder at rest.
 */
export async function seedFlows(ch: ClickHouse, plan: SeedPlan, settleMs: number, log: (msg: string) => void) {
  const columns =
    'org_id, ts, received_at, event_id, src_ip, dst_ip, src_port, dst_port, protocol, bytes, packets, ' +
    'exporter, in_if, out_if, src_as, dst_as, src_country, dst_country, dst_net_name';
  const chunks = Math.max(1, Math.ceil((plan.to - plan.from) / day));
  const perChunk = Math.ceil(plan.flows / chunks);
  const started = performance.now();
  for (let start = 0; start < plan.flows; start += perChunk) {
    const count = Math.min(perChunk, plan.flows - start);
    await ch.exec(
      `INSERT INTO ${ch.database}.flows (${columns}) ${seedSelect(plan, start, count)} SETTINGS parallel_view_processing = 1, max_insert_threads = 2`,
    );
    if ((start / perChunk) % 5 === 4) log(`seeded ${start + count} of ${plan.flows} flows in ${Math.round((performance.now() - started) / 1000)} s`);
  }
  const insertSeconds = (performance.now() - started) / 1000;
  // The 5-minute and hourly levels are folded from the minutes (storage/rollup-fold.ts), as the service's stream workers would fold them.
  const foldStarted = performance.now();
  const folded = await new RollupFold(ch).foldAll();
  const foldSeconds = (performance.now() - foldStarted) / 1000;
  log(`folded ${folded} 5-minute buckets in ${Math.round(foldSeconds)} s`);
  const settleStarted = performance.now();
  await settle(ch, settleMs);
  const settleSeconds = (performance.now() - settleStarted) / 1000;
  const parts = await ch.query<{ table: string; rows: string; parts: string; bytes: string }>(
    `SELECT table, sum(rows) AS rows, count() AS parts, sum(bytes_on_disk) AS bytes FROM system.parts
     WHERE database = ${str(ch.database)} AND active AND table LIKE 'flows%' GROUP BY table ORDER BY table`,
  );
  return {
    flows: plan.flows,
    insert_s: Math.round(insertSeconds * 10) / 10,
    rows_per_s: Math.round(plan.flows / insertSeconds),
    fold_s: Math.round(foldSeconds * 10) / 10,
    folded_buckets: folded,
    settle_s: Math.round(settleSeconds * 10) / 10,
    tables: Object.fromEntries(parts.map((p) => [p.table, { rows: Number(p.rows), parts: Number(p.parts), bytes_on_disk: Number(p.bytes) }])),
  };
}

/** Waits until no merge has run for three checks in a row, or `timeoutMs` passed. */
async function settle(ch: ClickHouse, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let quiet = 0;
  while (quiet < 3 && Date.now() < deadline) {
    const [row] = await ch.query<{ n: string }>(`SELECT count() AS n FROM system.merges WHERE database = ${str(ch.database)}`);
    quiet = Number(row?.n ?? 0) === 0 ? quiet + 1 : 0;
    await new Promise((r) => setTimeout(r, 500));
  }
}
