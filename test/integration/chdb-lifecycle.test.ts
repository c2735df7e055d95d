import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ChdbClickHouse } from '../../storage/chdb-clickhouse';

/**
 * chDB binds one data folder per process, and its close() only lets go of the
 * folder once the operations still running on the connection end. A stop that
 * returned earlier left the next start (a restart, or the next test file in
 * the same worker) refused with "only one active data directory per process".
 */
describe('chDB data folder lifecycle', () => {
  const folders: string[] = [];
  const folder = () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'nettel-chdb-life-'));
    folders.push(dir);
    return dir;
  };
  afterAll(() => {
    for (const dir of folders) fs.rmSync(dir, { recursive: true, force: true });
  });

  test('a stop during a running query returns only once another folder can be opened', async () => {
    const first = new ChdbClickHouse({ dataDir: folder(), database: 'life' });
    await first.start();
    const running = first.query<{ n: string }>('SELECT count() AS n FROM numbers(60000000) WHERE sipHash64(number) % 7 = 0');
    await first.stop();

    const second = new ChdbClickHouse({ dataDir: folder(), database: 'life' });
    await second.start();
    await expect(second.query<{ one: number }>('SELECT 1 AS one')).resolves.toEqual([{ one: 1 }]);
    await second.stop();
    await expect(running).resolves.toHaveLength(1);
  });

  test('a start that fails after opening its folder releases it', async () => {
    const refused = new ChdbClickHouse({ dataDir: folder(), database: 'not a name' });
    await expect(refused.start()).rejects.toThrow();

    const next = new ChdbClickHouse({ dataDir: folder(), database: 'life' });
    await next.start();
    await next.stop();
  });
});
