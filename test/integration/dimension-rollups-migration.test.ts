import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { newWriteId } from '../../core/ids';
import { createLogger } from '../../observability/logger';
import { ChdbClickHouse } from '../../storage/chdb-clickhouse';
import { HttpClickHouse, type ClickHouse } from '../../storage/clickhouse';
import { migrate, migrations } from '../../storage/migrations';
import { RollupFold } from '../../storage/rollup-fold';
import { RollupRepair } from '../../storage/rollup-repair';
import { seededRandom } from '../support/malformed';
import { startTestStack, transports, type TestStack } from '../support/test-stack';

/**
 * Migration 0048 on a database an earlier release filled: flows stored
 * before enrichment (no countries, no network names) and before receipts
 * (write id 0) or after (a write id each), spread over days. The dimension
 * rollups are back-filled from them on both generations, every flow read
 * with empty enrichment, and a back-fill run again (after a crash) leaves
 * the same sums. Then migration 0049 on the same database: the hourly
 * dimension rollup keeps its rows and is fed by the raw flows, the minute
 * and 5-minute ones are gone, and a recent write the hourly one lacks is
 * completed. Then migration 0063: both dimension levels folded from closed
 * buckets, a 5-minute one filled from the stored flows, the hourly view gone.
 */
const retention = { raw: 30, minute: 30, fiveMinutes: 90, hour: 400 };
const day = 86_400_000;
const lastBeforeEnrichment = '0028_guardrails';
/** The dimension rollups migration 0048 created; 0049 keeps the hourly one. */
const rollupsOf0048 = ['flows_dims_1m', 'flows_dims_5m', 'flows_dims_1h'];

interface OldFlow {
  org_id: string;
  ts: number;
  event_id: string;
  write_id: string;
  src_ip: string;
  dst_ip: string;
  protocol: string;
  bytes: number;
  packets: number;
  exporter: string;
  in_if: number;
  src_as: number;
}

function oldFlows(count: number, now: number): OldFlow[] {
  const rand = seededRandom(1848);
  const pick = <T>(list: readonly T[]) => list[Math.floor(rand() * list.length)]!;
  const writes = [newWriteId(now - 4 * day), newWriteId(now - 2 * day), newWriteId(now - day)];
  return Array.from({ length: count }, (_, i) => ({
    org_id: pick(['org_a', 'org_b']),
    ts: now - 5 * day + Math.floor(rand() * 5 * day),
    event_id: `evt_${i}`,
    write_id: pick(['0', ...writes]),
    src_ip: pick(['10.0.0.1', '2001:db8::1']),
    dst_ip: pick(['172.16.0.1', '8.8.8.8']),
    protocol: pick(['tcp', 'udp']),
    bytes: 40 + Math.floor(rand() * 1_500_000),
    packets: 1 + Math.floor(rand() * 1000),
    exporter: pick(['192.0.2.1', '198.51.100.9']),
    in_if: pick([1, 2]),
    src_as: pick([0, 13335, 3320]),
  }));
}

/** A row as JSON, its write id (a UInt64 past JavaScript's safe integers) a bare number. */
const row = (f: object) => JSON.stringify(f).replace(/"write_id":"(\d+)"/, '"write_id":$1');

/** Flows and bytes by workspace, exporter, input interface and source AS, with the enrichment columns as read. */
function expectedSums(flows: OldFlow[]): Record<string, string> {
  const out: Record<string, [number, number]> = {};
  for (const f of flows) {
    const s = (out[`${f.org_id} ${f.exporter} ${f.in_if} ${f.src_as} ${f.protocol} [] [] [] []`] ??= [0, 0]);
    s[0] += 1;
    s[1] += f.bytes;
  }
  return Object.fromEntries(Object.entries(out).map(([k, [n, b]]) => [k, `${n} flows, ${b} bytes`]));
}

describe.each(transports)('the dimension rollups back-filled by migration 0048 on %s', (transport) => {
  let t: TestStack;
  let ch: ClickHouse;
  let flows: OldFlow[];
  let applied: string[];
  beforeAll(async () => {
    t = await startTestStack(transport, { ROLES: 'api' });
    const database = `dims_${randomBytes(5).toString('hex')}`;
    ch = transport === 'chdb'
      ? new ChdbClickHouse({ dataDir: path.join(t.dataDir, 'chdb'), database })
      : new HttpClickHouse({ url: process.env.TEST_CLICKHOUSE_URL!, user: 'default', password: '', database });
    await ch.start();
    await migrate(ch, { retention, log: createLogger('silent'), through: lastBeforeEnrichment });
    flows = oldFlows(3_000, Date.now());
    await ch.insertJsonEachRow('flows', flows.map((f) => row({ ...f, received_at: f.ts, src_port: 0, dst_port: 443 })).join('\n') + '\n');
    applied = await migrate(ch, { retention, log: createLogger('silent'), through: '0048_dimension_rollups' });
  });
  afterAll(async () => {
    await ch.exec(`DROP DATABASE IF EXISTS ${ch.database}`);
    await ch.stop();
    await t.stop();
  });

  /** A table's flows and bytes by the dimensions, the enrichment columns in brackets ('' reads as []). */
  async function sums(table: string, orgs = ['org_a', 'org_b']): Promise<Record<string, string>> {
    const d = ch.dialect;
    const rows = await ch.query<{ k: string; n: string; b: string }>(
      `SELECT concat(org_id, ' ', ${d.addressText('exporter')}, ' ', toString(in_if), ' ', toString(src_as), ' ', protocol,
          ' [', src_country, '] [', dst_country, '] [', src_net_name, '] [', dst_net_name, ']') AS k,
        ${table === 'flows' ? 'count()' : 'sum(flows)'} AS n, sum(bytes) AS b
       FROM ${ch.database}.${table} WHERE org_id IN (${orgs.map((o) => `'${o}'`).join(', ')}) GROUP BY k`,
    );
    return Object.fromEntries(rows.map((r) => [r.k, `${r.n} flows, ${r.b} bytes`]));
  }

  const everyRollup = async () => Object.fromEntries(await Promise.all(rollupsOf0048.map(async (r) => [r, await sums(r)] as const)));
  const allLike = (value: Record<string, string>) => Object.fromEntries(rollupsOf0048.map((r) => [r, value]));
  /** Each write's receipt in a rollup: the flows it counts. */
  const receipts = async (table: string) =>
    (await ch.query<{ w: string; n: string }>(
      `SELECT toString(write_id) AS w, sum(flows) AS n FROM ${ch.database}.${table} WHERE org_id = '' AND write_id != 0 GROUP BY w ORDER BY w`,
    )).map((x) => ({ w: x.w, n: Number(x.n) }));

  test('the upgrade applies the enrichment migrations and then the dimension rollups', () => {
    const ids = migrations.map((m) => m.id);
    expect(applied).toEqual(ids.slice(ids.indexOf(lastBeforeEnrichment) + 1, ids.indexOf('0048_dimension_rollups') + 1));
  });

  test('flows stored before enrichment read with empty countries and network names, never an error', async () => {
    expect(await sums('flows')).toEqual(expectedSums(flows));
  });

  test('every dimension rollup is back-filled with the stored flows, with and without write ids', async () => {
    expect(await everyRollup()).toEqual(allLike(expectedSums(flows)));
  });

  test('the back-filled writes have their receipts, so a repair finds nothing to add', async () => {
    const writes = [...new Set(flows.map((f) => f.write_id).filter((w) => w !== '0'))].sort();
    for (const table of rollupsOf0048) {
      const expected = writes.map((w) => ({ w, n: flows.filter((f) => f.write_id === w).length }));
      expect({ table, receipts: await receipts(table) }).toEqual({ table, receipts: expected });
    }
    // Through 0048: the marks the folded levels go by come with migration 0062.
    expect(await new RollupRepair(ch, undefined, { marks: false }).complete(writes)).toEqual([]);
  });

  test('the back-fill run again, as after a crash part-way, leaves the same sums', async () => {
    await migrations.find((m) => m.id === '0048_dimension_rollups')!.run!(ch, { db: ch.database, dialect: ch.dialect, retention });
    expect(await everyRollup()).toEqual(allLike(expectedSums(flows)));
  });

  test('a flow written after the upgrade reaches every dimension rollup', async () => {
    const ts = Date.now();
    const flow = { org_id: 'org_new', ts, received_at: ts, event_id: 'evt_new', src_ip: '10.9.9.9', dst_ip: '2001:db8::9', src_port: 0, dst_port: 53, protocol: 'udp', bytes: 700, packets: 7, exporter: '192.0.2.1', in_if: 4, src_as: 64500, src_country: 'DE', write_id: newWriteId() };
    await ch.insertJsonEachRow('flows', row(flow) + '\n');
    expect(Object.fromEntries(await Promise.all(rollupsOf0048.map(async (r) => [r, await sums(r, ['org_new'])] as const)))).toEqual(
      allLike({ 'org_new 192.0.2.1 4 64500 udp [DE] [] [] []': '1 flows, 700 bytes' }),
    );
  });

  describe('then migration 0049', () => {
    const orgs = ['org_a', 'org_b', 'org_new'];
    let hourlyBefore: Record<string, string>;
    let receiptsBefore: Array<{ w: string; n: number }>;
    let cut: { flow: Record<string, unknown>; writeId: string };
    let applied0049: string[];
    beforeAll(async () => {
      hourlyBefore = await sums('flows_dims_1h', orgs);
      receiptsBefore = await receipts('flows_dims_1h');
      // A write the dimension views missed just before the upgrade (cut between its parts, or while the views were swapped).
      const writeId = newWriteId();
      const ts = Date.now();
      const flow = { org_id: 'org_cut', ts, received_at: ts, event_id: 'evt_cut', src_ip: '10.7.7.7', dst_ip: '172.16.0.7', src_port: 0, dst_port: 443, protocol: 'tcp', bytes: 900, packets: 9, exporter: '198.51.100.9', in_if: 2, src_as: 3320, write_id: writeId };
      for (const r of rollupsOf0048) await ch.exec(`DETACH TABLE ${ch.database}.${r}_mv`);
      await ch.insertJsonEachRow('flows', row(flow) + '\n');
      for (const r of rollupsOf0048) await ch.exec(`ATTACH TABLE ${ch.database}.${r}_mv`);
      cut = { flow, writeId };
      applied0049 = await migrate(ch, { retention, log: createLogger('silent'), through: '0049_dimension_rollup_hourly' });
    });

    test('the upgrade applies 0049 after 0048', () => {
      expect(applied0049).toEqual(['0049_dimension_rollup_hourly']);
    });

    test('the hourly dimension rollup keeps every row it stored', async () => {
      expect(await sums('flows_dims_1h', orgs)).toEqual(hourlyBefore);
      expect((await receipts('flows_dims_1h')).filter((r) => r.w !== cut.writeId)).toEqual(receiptsBefore);
    });

    test('the minute dimension rollup is dropped, every view but the hourly one too (the 5-minute table is kept for 0063), and the hourly view reads the raw flows', async () => {
      const tables = await ch.query<{ name: string; q: string }>(
        `SELECT name, create_table_query AS q FROM system.tables WHERE database = '${ch.database}' AND startsWith(name, 'flows_dims_') ORDER BY name`,
      );
      expect(tables.map((r) => r.name)).toEqual(['flows_dims_1h', 'flows_dims_1h_mv', 'flows_dims_5m']);
      expect(tables[1]!.q).toMatch(new RegExp(`FROM ${ch.database}\\.flows[ )\\n]`));
    });

    test('a recent write the hourly dimension rollup lacked is completed by the migration, with its receipt', async () => {
      expect(await sums('flows_dims_1h', ['org_cut'])).toEqual({ 'org_cut 198.51.100.9 2 3320 tcp [] [] [] []': '1 flows, 900 bytes' });
      expect((await receipts('flows_dims_1h')).filter((r) => r.w === cut.writeId)).toEqual([{ w: cut.writeId, n: 1 }]);
    });

    test('a flow written after 0049 reaches the hourly dimension rollup from the raw flows', async () => {
      const ts = Date.now();
      const flow = { org_id: 'org_after', ts, received_at: ts, event_id: 'evt_after', src_ip: '10.8.8.8', dst_ip: '2001:db8::8', src_port: 0, dst_port: 53, protocol: 'udp', bytes: 500, packets: 5, exporter: '192.0.2.1', in_if: 3, src_as: 13335, dst_country: 'NL', write_id: newWriteId() };
      await ch.insertJsonEachRow('flows', row(flow) + '\n');
      expect(await sums('flows_dims_1h', ['org_after'])).toEqual({ 'org_after 192.0.2.1 3 13335 udp [] [NL] [] []': '1 flows, 500 bytes' });
    });

    describe('then migration 0063 and every one after 0049', () => {
      const everyOrg = ['org_a', 'org_b', 'org_new', 'org_cut', 'org_after'];
      let hourlyBefore0063: Record<string, string>;
      let applied0063: string[];
      beforeAll(async () => {
        hourlyBefore0063 = await sums('flows_dims_1h', everyOrg);
        applied0063 = await migrate(ch, { retention, log: createLogger('silent') });
      });

      test('the upgrade applies every migration after 0049, 0063 among them', () => {
        expect(applied0063).toEqual(migrations.map((m) => m.id).slice(migrations.findIndex((m) => m.id === '0049_dimension_rollup_hourly') + 1));
        expect(applied0063).toContain('0063_folded_dimension_rollups');
      });

      test('the hourly dimension rollup loses its view and keeps every row; a 5-minute one is made beside it, with no view', async () => {
        const tables = await ch.query<{ name: string }>(
          `SELECT name FROM system.tables WHERE database = '${ch.database}' AND startsWith(name, 'flows_dims_') ORDER BY name`,
        );
        expect(tables.map((r) => r.name)).toEqual(['flows_dims_1h', 'flows_dims_5m']);
        expect(await sums('flows_dims_1h', everyOrg)).toEqual(hourlyBefore0063);
      });

      test('the 5-minute dimension rollup is filled with every stored flow, enriched or not', async () => {
        expect(await sums('flows_dims_5m', everyOrg)).toEqual(await sums('flows', everyOrg));
      });

      test('the fill run again, as after a crash part-way, leaves the same sums', async () => {
        await migrations.find((m) => m.id === '0063_folded_dimension_rollups')!.run!(ch, { db: ch.database, dialect: ch.dialect, retention });
        expect(await sums('flows_dims_5m', everyOrg)).toEqual(await sums('flows', everyOrg));
      });

      test('a flow written after 0063 reaches both dimension levels once its buckets are folded, and no level counts a flow twice', async () => {
        const ts = Date.now();
        const flow = { org_id: 'org_folded', ts, received_at: ts, event_id: 'evt_folded', src_ip: '10.6.6.6', dst_ip: '172.16.0.6', src_port: 0, dst_port: 443, protocol: 'tcp', bytes: 600, packets: 6, exporter: '192.0.2.1', in_if: 6, src_as: 64501, write_id: newWriteId() };
        await ch.insertJsonEachRow('flows', row(flow) + '\n');
        await new RollupFold(ch).foldAll({ openToo: true });
        const orgs = [...everyOrg, 'org_folded'];
        const stored = await sums('flows', orgs);
        expect({ '5m': await sums('flows_dims_5m', orgs), '1h': await sums('flows_dims_1h', orgs) }).toEqual({ '5m': stored, '1h': stored });
      });
    });
  });
});
