import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { connect } from 'nats';
import { createLogger } from '../../observability/logger';
import { startNatsCluster, type NatsCluster } from '../support/nats-cluster';
import { startTestStack, type TestStack } from '../support/test-stack';
import { waitFor } from '../support/wait';
import { names, outboxNames } from '../../streams/names';

/**
 * On a three-node JetStream cluster with NATS_REPLICAS=3, every stream and
 * key-value bucket the service creates keeps three copies, including a
 * bucket an earlier start had created with one.
 */
describe('replicas on a NATS cluster', () => {
  let dir: string;
  let cluster: NatsCluster;
  let t: TestStack;
  const prefix = `rep${Date.now().toString(36)}`;

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'nettel-cluster-'));
    cluster = await startNatsCluster(dir, 3, createLogger('silent'));
    // An earlier start's bucket, with one copy. The cluster runs deploy/nats/nettel.conf, whose roles' users know only the
    // prefix `nettel`: this test's prefix is its own, so it runs as the admin user, as the topology job does.
    const nc = await connect({ servers: cluster.url.split(','), user: 'admin', pass: cluster.passwords.admin });
    await waitFor(() => nc.jetstream().views.kv(names(prefix).auditHeadsBucket, { history: 1, replicas: 1 }), 30_000, 'the cluster to accept a bucket');
    await nc.drain();
    t = await startTestStack('chdb', { NATS_URL: cluster.url, NATS_REPLICAS: '3', NATS_PREFIX: prefix, ...cluster.credentials('admin') });
  }, 120_000);
  afterAll(async () => {
    await t?.stop();
    await cluster?.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  test('every stream and bucket of the service keeps three copies', async () => {
    const outbox = outboxNames(prefix);
    const streams = [names(prefix).stream, names(prefix).deadLetter, outbox.outbox, outbox.deliveries, `KV_${names(prefix).auditHeadsBucket}`, `KV_${names(prefix).locksBucket}`];
    const replicas = await Promise.all(streams.map(async (s) => [s, (await t.stack.nats.jsm.streams.info(s)).config.num_replicas] as const));
    expect(Object.fromEntries(replicas)).toEqual(Object.fromEntries(streams.map((s) => [s, 3])));
  });
});
