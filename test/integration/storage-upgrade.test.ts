import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { createLogger } from '../../observability/logger';
import { ChdbClickHouse } from '../../storage/chdb-clickhouse';
import { dialectOf } from '../../storage/dialect';
import { migrate, migrations } from '../../storage/migrations';
import { RollupFold } from '../../storage/rollup-fold';
import { seededRandom } from '../support/malformed';
import { startTestStack, type TestStack } from '../support/test-stack';

/**
 * An upgrade on current ClickHouse (chDB): a database the previous release
 * created (migrations 0001 to 0008, every flow table in 18.16's types) and
 * filled, then migrated by this release. Flows are converted in place and
 * the new rollups back-filled; every sum stays what it was.
 */
const retention = { raw: 30, minute: 30, fiveMinutes: 90, hour: 400 };
const day = 86_400_000;
const sources = ['10.0.0.1', '10.0.3.7', '192.168.1.20', '2001:db8::1', '2001:db8:0:1::42'];
const destinations = ['172.16.0.1', '172.16.0.2', '8.8.8.8', 'fd00::1', '2606:4700::1111'];
const destinationTables = ['flows', 'flows_1m', 'flows_5m', 'flows_1h'];
const sourceTables = ['flows_src_1m', 'flows_src_5m', 'flows_src_1h'];
const orgs = ['org_a', 'org_b', 'org_c'];

interface LegacyFlow {
  org_id: string;
  ts: number;
  event_id: string;
  src_ip: string;
  dst_ip: string;
  protocol: string;
  bytes: number;
  packets: number;
}

interface Sums {
  flows: number;
  bytes: number;
  packets: number;
}

/** Flows of three orgs over the five days before `now`, IPv4 and IPv6, as the previous release stored them. */
function legacyFlows(count: number, now: number): LegacyFlow[] {
  const rand = seededRandom(29);
  const pick = <T>(list: T[]) => list[Math.floor(rand() * list.length)]!;
  return Array.from({ length: count }, (_, i) => ({
    org_id: pick(orgs),
    ts: now - 5 * day + Math.floor(rand() * 5 * day),
    event_id: `evt_${i}`,
    src_ip: pick(sources),
    dst_ip: pick(destinations),
    protocol: pick(['tcp', 'udp']),
    bytes: 40 + Math.floor(rand() * 1_500_000),
    packets: 1 + Math.floor(rand() * 1000),
  }));
}

function expectedSums(flows: LegacyFlow[], keyOf: (f: LegacyFlow) => string): Record<string, Sums> {
  const out: Record<string, Sums> = {};
  for (const f of flows) {
    const s = (out[`${f.org_id} ${keyOf(f)}`] ??= { flows: 0, bytes: 0, packets: 0 });
    s.flows += 1;
    s.bytes += f.bytes;
    s.packets += f.packets;
  }
  return out;
}

/** What the previous release's migrate did: migrations 0001 to 0008, in 18.16's types, recorded as applied. */
/** The schema the previous release left: migrations up to 0008, written for 18.16 (the only generation it knew). */
async function migrateAsPreviousRelease(ch: ChdbClickHouse): Promise<void> {
  await migrate(ch, { dialect: dialectOf('18.16.1'), retention, log: createLogger('silent'), through: '0008_replays' });
}

describe('an upgrade of a database the previous release created, on current ClickHouse', () => {
  let t: TestStack;
  let ch: ChdbClickHouse;
  let flows: LegacyFlow[];
  let applied: string[];
  beforeAll(async () => {
    t = await startTestStack('chdb', { ROLES: 'api' });
    // A database of its own beside the stack's, in the same chDB folder (one data folder per process).
    ch = new ChdbClickHouse({ dataDir: path.join(t.dataDir, 'chdb'), database: `upgrade_${randomBytes(5).toString('hex')}` });
    await ch.start();
    await migrateAsPreviousRelease(ch);
    flows = legacyFlows(4_000, Date.now());
    for (let i = 0; i < flows.length; i += 1_000) {
      const rows = flows.slice(i, i + 1_000).map((f) => JSON.stringify({ ...f, received_at: f.ts, src_port: 0, dst_port: 443 }));
      await ch.insertJsonEachRow('flows', rows.join('\n') + '\n');
    }
    applied = await migrate(ch, { retention, log: createLogger('silent') });
  });
  afterAll(async () => {
    await ch.exec(`DROP DATABASE IF EXISTS ${ch.database}`);
    await ch.stop();
    await t.stop();
  });

  /** Count (or summed flows), bytes and packets per org and key, with addresses as text. */
  async function storedSums(table: string, key: string, ofOrgs: string[]): Promise<Record<string, Sums>> {
    const d = ch.dialect;
    const keyText = key === 'src_ip' || key === 'dst_ip' ? d.addressText(key) : key;
    const flowCount = table === 'flows' ? 'count()' : 'sum(flows)';
    const rows = await ch.query<{ k: string; n: string; b: string; p: string }>(
      `SELECT concat(org_id, ' ', ${keyText}) AS k, ${flowCount} AS n, sum(bytes) AS b, sum(packets) AS p
       FROM ${ch.database}.${table} WHERE org_id IN (${ofOrgs.map((o) => `'${o}'`).join(', ')}) GROUP BY k`,
    );
    return Object.fromEntries(rows.map((r) => [r.k, { flows: Number(r.n), bytes: Number(r.b), packets: Number(r.p) }]));
  }

  async function sumsOfTables(tables: string[], key: string, ofOrgs = orgs): Promise<Record<string, Record<string, Sums>>> {
    return Object.fromEntries(await Promise.all(tables.map(async (table) => [table, await storedSums(table, key, ofOrgs)] as const)));
  }

  const everyTable = (tables: string[], sums: Record<string, Sums>) => Object.fromEntries(tables.map((table) => [table, sums]));

  test('the upgrade applies the conversion and the back-fill, and nothing the previous release applied', () => {
    // Every migration after the previous release's last (0008), in order; the conversion and the back-fill first.
    expect(applied).toEqual(migrations.map((m) => m.id).slice(migrations.findIndex((m) => m.id === '0008_replays') + 1));
    expect(applied.slice(0, 2)).toEqual(['0009_flows_current_types', '0010_long_range_rollups']);
  });

  test('flows take the current types in place', async () => {
    const rows = await ch.query<{ name: string; type: string }>(
      `SELECT name, type FROM system.columns WHERE database = '${ch.database}' AND table = 'flows' AND name IN ('ts', 'src_ip', 'org_id')`,
    );
    expect(Object.fromEntries(rows.map((r) => [r.name, r.type]))).toEqual({ ts: 'DateTime64(3)', src_ip: 'IPv6', org_id: 'LowCardinality(String)' });
  });

  test('flows and every destination rollup keep the count and sums of each org', async () => {
    const perOrg = expectedSums(flows, () => '');
    expect(await sumsOfTables(destinationTables, "''")).toEqual(everyTable(destinationTables, perOrg));
  });

  test('flows and every destination rollup keep the count and sums of each destination', async () => {
    const perDestination = expectedSums(flows, (f) => f.dst_ip);
    expect(await sumsOfTables(destinationTables, 'dst_ip')).toEqual(everyTable(destinationTables, perDestination));
  });

  test('every source rollup is back-filled with the count and sums of each source', async () => {
    const perSource = expectedSums(flows, (f) => f.src_ip);
    expect(await sumsOfTables(sourceTables, 'src_ip')).toEqual(everyTable(sourceTables, perSource));
  });

  test('the hourly rollups hold each flow in the hour of its time', async () => {
    const perHour = expectedSums(flows, (f) => String(Math.floor(f.ts / 3_600_000) * 3_600_000));
    const hour = ch.dialect.bucketMs('minute');
    expect(await sumsOfTables(['flows_1h', 'flows_src_1h'], `toString(${hour})`)).toEqual(everyTable(['flows_1h', 'flows_src_1h'], perHour));
  });

  test('addresses read back as the text they were stored as, IPv4 dotted', async () => {
    const d = ch.dialect;
    const rows = await ch.query<{ a: string }>(
      `SELECT DISTINCT ${d.addressText('src_ip')} AS a FROM ${ch.database}.flows
       UNION ALL SELECT DISTINCT ${d.addressText('dst_ip')} AS a FROM ${ch.database}.flows`,
    );
    expect(rows.map((r) => r.a).sort()).toEqual([...sources, ...destinations].sort());
  });

  test('a flow written after the upgrade reaches every rollup', async () => {
    const ts = Date.now();
    const flow = { org_id: 'org_new', ts, received_at: ts, event_id: 'evt_new', src_ip: '10.9.9.9', dst_ip: '2001:db8::9', src_port: 0, dst_port: 53, protocol: 'udp', bytes: 700, packets: 7 };
    await ch.insertJsonEachRow('flows', JSON.stringify(flow) + '\n');
    // The 5-minute and hourly levels are folded from the minutes (storage/rollup-fold.ts), the open bucket too here.
    await new RollupFold(ch).foldAll({ openToo: true });
    const tables = [...destinationTables, ...sourceTables];
    expect(await sumsOfTables(tables, "''", ['org_new'])).toEqual(everyTable(tables, { 'org_new ': { flows: 1, bytes: 700, packets: 7 } }));
  });
});
