import { randomBytes } from 'node:crypto';
import { createLogger } from '../../observability/logger';
import { MitigationLedger, type MitigationRecord } from '../../streams/mitigation-ledger';
import { NatsClient } from '../../streams/nats-client';
import { names } from '../../streams/names';

/**
 * The ledger is read whole every second by the reconciler and by each
 * automation run; it answers from a copy a watch keeps, and a reading still
 * holds every write made before it, by any process: two ledgers on the same
 * bucket stand for two processes (the tests' nats-server, a bucket of its own).
 */
describe('the mitigation ledger read by another process', () => {
  const prefix = `t${randomBytes(5).toString('hex')}`;
  const signingKey = randomBytes(32).toString('base64url');
  const log = createLogger('silent');
  let nats: NatsClient;
  let writer: MitigationLedger;
  let reader: MitigationLedger;
  const record = (id: string): MitigationRecord => ({
    id,
    org_id: 'org_a',
    mitigation: { action: 'blackhole', destination: '198.51.100.9/32' },
    starts_at: Date.now() - 1_000,
    ends_at: Date.now() + 600_000,
  });

  beforeAll(async () => {
    nats = new NatsClient({ url: process.env.TEST_NATS_URL!, name: 'ledger-test' }, log);
    await nats.start();
    writer = new MitigationLedger({ nats, prefix, replicas: 1, signingKey });
    reader = new MitigationLedger({ nats, prefix, replicas: 1, signingKey });
    await writer.start();
    await reader.start();
  });

  afterAll(async () => {
    await reader?.stop();
    await writer?.stop();
    await nats?.jsm.streams.delete(`KV_${names(prefix).mitigationsBucket}`).catch(() => undefined);
    await nats?.stop();
  });

  test('a record written by one process is in the next reading of another', async () => {
    for (let i = 0; i < 20; i += 1) {
      await writer.put(record(`run-${i}`));
      expect((await reader.all()).records.map((r) => r.id)).toContain(`run-${i}`);
    }
  });

  test('a withdrawal written by one process is in the next reading of another', async () => {
    await writer.put(record('withdrawn-1'));
    await writer.withdraw('org_a', 'withdrawn-1', Date.now());
    expect((await reader.all()).records.find((r) => r.id === 'withdrawn-1')?.withdrawn_at).toBeDefined();
  });

  test('a record one process forgets is gone from the next reading of another', async () => {
    await writer.put(record('forgotten-1'));
    await writer.remove('org_a', 'forgotten-1');
    expect((await reader.all()).records.map((r) => r.id)).not.toContain('forgotten-1');
  });

  test('an entry written by something else than the service is reported, not read as a record', async () => {
    const kv = await nats.js().views.kv(names(prefix).mitigationsBucket);
    await kv.put('org_a.forged-1', JSON.stringify({ ...record('forged-1'), mac: 'x' }));
    const { records, unreadable } = await reader.all();
    expect(records.map((r) => r.id)).not.toContain('forged-1');
    expect(unreadable).toContainEqual({ key: 'org_a.forged-1', reason: 'its signature does not verify' });
  });

  test('an entry of before a withdrawal, put back in the bucket, is refused as a replay and reported', async () => {
    const kv = await nats.js().views.kv(names(prefix).mitigationsBucket);
    await writer.put(record('replayed-1'));
    const signedBefore = (await kv.get('org_a.replayed-1'))!.string();
    await writer.withdraw('org_a', 'replayed-1', Date.now());
    await kv.put('org_a.replayed-1', signedBefore);
    const { records, unreadable } = await reader.all();
    expect(records.map((r) => r.id)).not.toContain('replayed-1');
    expect(unreadable).toContainEqual({ key: 'org_a.replayed-1', reason: expect.stringMatching(/^it was written again after a later write \(signed for revision \d+, found at \d+\)$/) as unknown });
  });

  test('a record purged from the bucket before its end is reported as a gap', async () => {
    const kv = await nats.js().views.kv(names(prefix).mitigationsBucket);
    await writer.put(record('purged-1'));
    expect((await reader.all()).records.map((r) => r.id)).toContain('purged-1');
    await kv.purge('org_a.purged-1');
    expect((await reader.all()).unreadable).toContainEqual({ key: 'org_a.purged-1', reason: 'it vanished before its end' });
  });

  test('a ledger whose copy has stopped reads the bucket itself, and finds the same records', async () => {
    const watched = (await reader.all()).records.map((r) => r.id).sort();
    const direct = new MitigationLedger({ nats, prefix, replicas: 1, signingKey });
    await direct.start();
    await direct.stop();
    expect((await direct.all()).records.map((r) => r.id).sort()).toEqual(watched);
    expect(watched.length).toBeGreaterThan(20);
  });
});
