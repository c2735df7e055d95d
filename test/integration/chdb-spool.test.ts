import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ClickHouseError } from '../../storage/clickhouse';
import { ChdbClickHouse } from '../../storage/chdb-clickhouse';
import { startTestStack, type TestStack } from '../support/test-stack';
import { orgIs, storedCount } from '../support/stored-count';

/**
 * Large chDB inserts are spooled to a file and read back by the engine
 * (INSERT … FROM INFILE). The stack under test spools into a folder of its own.
 */
describe('chDB inserts: the spool folder, and the order statements reach the engine', () => {
  let t: TestStack;
  let spool: string;
  beforeAll(async () => {
    spool = fs.mkdtempSync(path.join(os.tmpdir(), 'nettel-spool-'));
    t = await startTestStack('chdb', { ROLES: 'api', CHDB_SPOOL_DIR: spool });
  });
  afterAll(async () => {
    await t.stop();
    fs.rmSync(spool, { recursive: true, force: true });
  });

  const flowLines = (orgId: string, count: number, now: number) =>
    Array.from({ length: count }, (_, i) =>
      JSON.stringify({ org_id: orgId, ts: now - i, received_at: now, event_id: `evt_${i}`, src_ip: `10.0.${i % 250}.1`, dst_ip: '2001:db8::1', src_port: 1, dst_port: 443, protocol: 'tcp', bytes: 100, packets: 1 }),
    ).join('\n') + '\n';

  test('an insert of several MiB stores every row and leaves no file behind', async () => {
    const ch = t.stack.clickhouse;
    const payload = flowLines('org_spool', 40_000, Date.now());
    expect(Buffer.byteLength(payload)).toBeGreaterThan(4 * 1024 * 1024);
    await ch.insertJsonEachRow('flows', payload);
    const rows = await ch.query<{ n: string; b: string }>(`SELECT count() AS n, sum(bytes) AS b FROM ${ch.database}.flows WHERE org_id = 'org_spool'`);
    expect([Number(rows[0]?.n), Number(rows[0]?.b)]).toEqual([40_000, 4_000_000]);
    expect(fs.readdirSync(spool)).toEqual([]);
  });

  test('a spooled insert the engine refuses fails with its error code, stores nothing and leaves no file behind', async () => {
    const ch = t.stack.clickhouse;
    const payload = flowLines('org_spool_bad', 40_000, Date.now()) + '{"org_id":"org_spool_bad","ts":"not a time"}\n';
    const failure = await ch.insertJsonEachRow('flows', payload).then(() => undefined, (err: unknown) => err);
    expect(failure).toBeInstanceOf(ClickHouseError);
    expect((failure as ClickHouseError).code).toEqual(expect.any(Number));
    expect(await storedCount(ch, 'flows', orgIs('org_spool_bad'))).toBe(0);
    expect(fs.readdirSync(spool)).toEqual([]);
  });

  test('inserts of flows run one at a time in their own session, in order, and a read issued behind them does not wait for them all', async () => {
    const ch = t.stack.clickhouse;
    const answered: string[] = [];
    // 5,000 flows are about 1 MiB: bulk inserts through memory, each handed to the engine at once.
    const inserts = [1, 2, 3].map((i) => ch.insertJsonEachRow('flows', flowLines(`org_order_${i}`, 5_000, Date.now())).then(() => answered.push(`insert ${i}`)));
    const read = ch.query(`SELECT count() AS n FROM ${ch.database}.flows WHERE org_id = 'org_order_1'`).then(() => answered.push('read'));
    await Promise.all([...inserts, read]);
    // The read runs in a reads' session beside the inserts (chdb-sessions.test.ts shows it ending while one runs).
    expect(answered.filter((a) => a !== 'read')).toEqual(['insert 1', 'insert 2', 'insert 3']);
    expect(answered.indexOf('read')).toBeLessThan(answered.indexOf('insert 3'));
  });

  /** A second handle on the stack's chDB folder (one folder per process), with a spool folder of the test's choosing. */
  async function handle(spoolDir: string): Promise<ChdbClickHouse> {
    const ch = new ChdbClickHouse({ dataDir: path.join(t.dataDir, 'chdb'), database: t.stack.clickhouse.database, spoolDir });
    await ch.start();
    return ch;
  }

  test('a spool folder that cannot be written lets the insert go through memory', async () => {
    const ch = await handle(path.join(spool, 'missing', 'folder'));
    try {
      await ch.insertJsonEachRow('flows', flowLines('org_spool_fallback', 40_000, Date.now()));
      expect(await storedCount(ch, 'flows', orgIs('org_spool_fallback'))).toBe(40_000);
    } finally {
      await ch.stop();
    }
  });

  test('a start removes the spool files of processes that no longer run, and no other', async () => {
    const stale = path.join(spool, 'nettel-insert-999999999-left.jsonl');
    const mine = path.join(spool, `nettel-insert-${process.pid}-in-flight.jsonl`);
    fs.writeFileSync(stale, '{}\n');
    fs.writeFileSync(mine, '{}\n');
    await (await handle(spool)).stop();
    expect(fs.readdirSync(spool)).toEqual([path.basename(mine)]);
    fs.rmSync(mine);
  });
});
