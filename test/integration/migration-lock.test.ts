import { randomBytes } from 'node:crypto';
import { createLogger } from '../../observability/logger';
import { HttpClickHouse } from '../../storage/clickhouse';
import { migrate } from '../../storage/migrations';
import { Locks, defaultLockConfig } from '../../streams/locks';
import { NatsClient } from '../../streams/nats-client';
import { names } from '../../streams/names';

/**
 * Processes that start together migrate one at a time: the schema lock in
 * JetStream's key-value store serializes them, so each migration is applied
 * once even when two processes race for it. A loop that one process leads
 * (the replay reconciler) skips its round where the lock is held.
 */
const retention = { raw: 30, minute: 30, fiveMinutes: 90, hour: 400 };
const log = createLogger('silent');

describe('schema migrations under the lock', () => {
  const prefix = `lk${randomBytes(4).toString('hex')}`;
  const database = `lock_${randomBytes(4).toString('hex')}`;
  const nats = new NatsClient({ url: process.env.TEST_NATS_URL!, name: 'lock-test' }, log);
  const clients = [1, 2].map(() => new HttpClickHouse({ url: process.env.TEST_CLICKHOUSE_URL!, user: 'default', password: '', database }));
  beforeAll(async () => {
    await nats.start();
    for (const ch of clients) await ch.start();
  });
  afterAll(async () => {
    await clients[0]!.exec(`DROP DATABASE IF EXISTS ${database}`);
    for (const ch of clients) await ch.stop();
    await nats.jsm.streams.delete(`KV_${names(prefix).locksBucket}`).catch(() => undefined);
    await nats.stop();
  });

  test('two processes migrating one database at once apply each migration exactly once', async () => {
    const locks = [new Locks(defaultLockConfig(prefix), nats, log), new Locks(defaultLockConfig(prefix), nats, log)];
    for (const l of locks) await l.start();
    const applied = await Promise.all(clients.map((ch, i) => locks[i]!.withLock('schema-migrations', () => migrate(ch, { retention, log }))));
    const rows = await clients[0]!.query<{ id: string; n: string }>(`SELECT id, count() AS n FROM ${database}.schema_migrations GROUP BY id`);
    expect(rows.filter((r) => Number(r.n) !== 1)).toEqual([]);
    // One of the two found everything applied by the other.
    expect(applied.map((ids) => ids.length).sort((a, b) => a - b)[0]).toBe(0);
  });

  test('a lock is held by one process at a time', async () => {
    const [a, b] = [new Locks(defaultLockConfig(prefix), nats, log), new Locks(defaultLockConfig(prefix), nats, log)];
    await a.start();
    await b.start();
    const events: string[] = [];
    const hold = (who: string) => async () => {
      events.push(`${who} in`);
      // Held a while so that the other's withLock tries meanwhile: a waiting withLock shows no event to await.
      await new Promise((resolve) => setTimeout(resolve, 300));
      events.push(`${who} out`);
    };
    await Promise.all([a.withLock('exclusive', hold('a')), b.withLock('exclusive', hold('b'))]);
    expect([events.slice(0, 2), events.slice(2)].map((pair) => pair[0]!.split(' ')[0] === pair[1]!.split(' ')[0])).toEqual([true, true]);
  });

  test('a waiter takes the lock as soon as the waiter of its process before it released it, not at its next retry', async () => {
    // A retry a minute away: a waiter that tried the key again only at its retry would end the test by its timeout.
    const locks = new Locks({ ...defaultLockConfig(prefix), retryMs: 60_000 }, nats, log);
    await locks.start();
    const order: number[] = [];
    const hold = (i: number) => async () => {
      order.push(i);
      await new Promise((resolve) => setTimeout(resolve, 20));
    };
    await Promise.all(Array.from({ length: 8 }, (_, i) => locks.withLock('queued', hold(i))));
    expect(order).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
  }, 20_000);

  test('a process that finds the lock held skips its work instead of waiting, and takes the lock once it is free', async () => {
    const [a, b] = [new Locks(defaultLockConfig(prefix), nats, log), new Locks(defaultLockConfig(prefix), nats, log)];
    await a.start();
    await b.start();
    const skipped = await a.withLock('leader', () => b.tryWithLock('leader', () => Promise.resolve('b ran')));
    expect(skipped).toBeUndefined();
    expect(await b.tryWithLock('leader', () => Promise.resolve('b ran'))).toBe('b ran');
  });
});
