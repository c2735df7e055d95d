import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { newWriteId } from '../../core/ids';
import { createLogger } from '../../observability/logger';
import { ChdbClickHouse } from '../../storage/chdb-clickhouse';
import { HttpClickHouse, type ClickHouse } from '../../storage/clickhouse';
import { migrate, migrations } from '../../storage/migrations';
import { dimensionRollups } from '../../storage/migrations/flow-tables';
import { RollupRepair } from '../../storage/rollup-repair';
import { seededRandom } from '../support/malformed';
import { startTestStack, transports, type TestStack } from '../support/test-stack';

/**
 * Migration 0048 on a database an earlier release filled: flows stored
 * before enrichment (no countries, no network names) and before receipts
 * (write id 0) or after (a write id each), spread over days. The dimension
 * rollups are back-filled from them on both generations, every flow read
 * with empty enrichment, and a back-fill run again (after a crash) leaves
 * the same sums.
 */
const retention = { raw: 30, minute: 30, fiveMinutes: 90, hour: 400 };
const day = 86_400_000;
const lastBeforeEnrichment = '0028_guardrails';

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
    applied = await migrate(ch, { retention, log: createLogger('silent') });
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

  const everyRollup = async () => Object.fromEntries(await Promise.all(dimensionRollups.map(async (r) => [r.table, await sums(r.table)] as const)));
  const allLike = (value: Record<string, string>) => Object.fromEntries(dimensionRollups.map((r) => [r.table, value]));

  test('the upgrade applies the enrichment migrations and then the dimension rollups', () => {
    expect(applied).toEqual(migrations.map((m) => m.id).slice(migrations.findIndex((m) => m.id === lastBeforeEnrichment) + 1));
    expect(applied[applied.length - 1]).toBe('0048_dimension_rollups');
  });

  test('flows stored before enrichment read with empty countries and network names, never an error', async () => {
    expect(await sums('flows')).toEqual(expectedSums(flows));
  });

  test('every dimension rollup is back-filled with the stored flows, with and without write ids', async () => {
    expect(await everyRollup()).toEqual(allLike(expectedSums(flows)));
  });

  test('the back-filled writes have their receipts, so a repair finds nothing to add', async () => {
    const writes = [...new Set(flows.map((f) => f.write_id).filter((w) => w !== '0'))].sort();
    for (const r of dimensionRollups) {
      const rows = await ch.query<{ w: string; n: string }>(
        `SELECT toString(write_id) AS w, sum(flows) AS n FROM ${ch.database}.${r.table} WHERE org_id = '' AND write_id != 0 GROUP BY w ORDER BY w`,
      );
      const expected = writes.map((w) => ({ w, n: flows.filter((f) => f.write_id === w).length }));
      expect({ table: r.table, receipts: rows.map((x) => ({ w: x.w, n: Number(x.n) })) }).toEqual({ table: r.table, receipts: expected });
    }
    expect(await new RollupRepair(ch).complete(writes)).toEqual([]);
  });

  test('the back-fill run again, as after a crash part-way, leaves the same sums', async () => {
    await migrations.find((m) => m.id === '0048_dimension_rollups')!.run!(ch, { db: ch.database, dialect: ch.dialect, retention });
    expect(await everyRollup()).toEqual(allLike(expectedSums(flows)));
  });

  test('a flow written after the upgrade reaches every dimension rollup', async () => {
    const ts = Date.now();
    const flow = { org_id: 'org_new', ts, received_at: ts, event_id: 'evt_new', src_ip: '10.9.9.9', dst_ip: '2001:db8::9', src_port: 0, dst_port: 53, protocol: 'udp', bytes: 700, packets: 7, exporter: '192.0.2.1', in_if: 4, src_as: 64500, src_country: 'DE', write_id: newWriteId() };
    await ch.insertJsonEachRow('flows', row(flow) + '\n');
    expect(Object.fromEntries(await Promise.all(dimensionRollups.map(async (r) => [r.table, await sums(r.table, ['org_new'])] as const)))).toEqual(
      allLike({ 'org_new 192.0.2.1 4 64500 udp [DE] [] [] []': '1 flows, 700 bytes' }),
    );
  });
});
