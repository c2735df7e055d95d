import { randomBytes } from 'node:crypto';
import { createLogger } from '../../observability/logger';
import { Lease } from '../../streams/lease';
import { NatsClient } from '../../streams/nats-client';
import { waitFor } from '../support/wait';

/**
 * The lease's key is NATS data: whoever can write the bucket may leave
 * anything there. A value that names no holder this process wrote is
 * another's, never taken for this process's, and once JetStream expires it
 * the lease is taken as from a stopped holder.
 */
const ttlMs = 3_000;
let nats: NatsClient;
const bucket = `LEASE_T${randomBytes(4).toString('hex').toUpperCase()}`;

beforeAll(async () => {
  nats = new NatsClient({ url: process.env.TEST_NATS_URL!, name: 'lease-hostile-key-test' }, createLogger('silent', 'test'));
  await nats.start();
});
afterAll(async () => {
  await nats.jsm.streams.delete(`KV_${bucket}`).catch(() => undefined);
  await nats.stop();
});

test.each([
  ['text that is not JSON', 'not json {'],
  ['JSON whose owner is not text', JSON.stringify({ owner: 42 })],
  ['JSON naming another holder', JSON.stringify({ owner: 'elsewhere/1/ffff' })],
])('a lease key holding %s is not held by this process until JetStream expires it, then it is taken', async (_what, value) => {
  const key = `speaker.k${randomBytes(3).toString('hex')}`;
  const lease = new Lease({ bucket, key, ttlMs, replicas: 1 }, nats);
  await lease.start();
  const kv = await nats.js().views.kv(bucket);
  await kv.put(key, value);

  expect(await lease.hold()).toBe(false);
  const heldAt = await waitFor(async () => ((await lease.hold()) ? Date.now() : undefined), 4 * ttlMs, 'the lease taken after the key expired');

  expect(heldAt).toBeGreaterThan(0);
  expect(await lease.holder()).toBe(lease.owner);
  await lease.release();
  await lease.stop();
}, 20_000);
