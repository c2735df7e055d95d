import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ChdbClickHouse } from '../../storage/chdb-clickhouse';

/**
 * chDB runs one statement at a time per session, and the statements of
 * several sessions on one data folder side by side. The adapter keeps the
 * inserts of flows (and large inserts) in one session and reads in others,
 * so a read does not wait behind an insert of flows, and it follows the
 * inserts of flows it has in hand for the rollup fold.
 */
describe("chDB's sessions", () => {
  let dir: string;
  let ch: ChdbClickHouse;
  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'nettel-chdb-sessions-'));
    ch = new ChdbClickHouse({ dataDir: dir, database: 'lanes' });
    await ch.start();
    // An insert into `flows` that takes about a second: each row waits 0.25 s in a view.
    await ch.exec('CREATE TABLE lanes.flows (x UInt64) ENGINE = MergeTree ORDER BY x');
    await ch.exec('CREATE TABLE lanes.slow_sink (x UInt64, s UInt8) ENGINE = MergeTree ORDER BY x');
    await ch.exec('CREATE MATERIALIZED VIEW lanes.slow TO lanes.slow_sink AS SELECT x, sleepEachRow(0.25) AS s FROM lanes.flows');
  });
  afterAll(async () => {
    await ch.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  /** Settles `work` and notes when, in the order of `finished`. */
  const noted = <T,>(finished: string[], name: string, work: Promise<T>) => work.then((v) => (finished.push(name), v));
  const fourRows = Buffer.from('{"x":1}\n{"x":2}\n{"x":3}\n{"x":4}\n');

  test('a read ends while a long read runs on another session', async () => {
    const finished: string[] = [];
    const slow = noted(finished, 'slow', ch.query('SELECT sleepEachRow(0.25) AS s FROM numbers(4)'));
    const quick = noted(finished, 'quick', ch.query<{ one: number }>('SELECT 1 AS one'));
    await expect(quick).resolves.toEqual([{ one: 1 }]);
    await slow;
    expect(finished).toEqual(['quick', 'slow']);
  });

  test('a read ends while an insert of flows runs, and the insert is followed until it ends', async () => {
    const finished: string[] = [];
    const insert = noted(finished, 'insert', ch.insertJsonEachRow('flows', fourRows));
    const quick = noted(finished, 'read', ch.query('SELECT 1 AS one'));
    await quick;
    const settled = noted(finished, 'settled', ch.insertsSettled());
    await Promise.all([insert, settled]);
    expect(finished).toEqual(['read', 'insert', 'settled']);
    await expect(ch.query<{ n: string }>('SELECT toString(count()) AS n FROM lanes.flows')).resolves.toEqual([{ n: '4' }]);
  });

  test('with no insert of flows in hand, the inserts are settled at once', async () => {
    await expect(ch.insertsSettled()).resolves.toBeUndefined();
  });

  test('a SET reaches every session: reads side by side both run under it', async () => {
    await ch.exec('SET max_threads = 3');
    try {
      // Two reads at once go to the two reads' sessions.
      const read = () => ch.query<{ v: string }>("SELECT toString(getSetting('max_threads')) AS v");
      expect(await Promise.all([read(), read()])).toEqual([[{ v: '3' }], [{ v: '3' }]]);
    } finally {
      await ch.exec('SET max_threads = 0');
    }
  });
});
