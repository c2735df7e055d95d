import { createLogger } from '../observability/logger';
import { NatsClient } from '../streams/nats-client';
import { loadConfig } from './config';
import { ensureJetStreamObjects } from './jetstream-objects';

/**
 * `node dist/service/nats-topology.js`: the deployment's topology job. With
 * the NATS admin user's credentials (the only user allowed to change the
 * topology in deploy/nats/nettel.conf) and the roles' own settings (prefix,
 * replicas, sizes), it creates or updates every stream, consumer and bucket,
 * then exits; the roles start on what it made. Run it again after a change
 * of those settings.
 */
async function main(): Promise<void> {
  const config = loadConfig();
  const log = createLogger(config.logLevel, 'nettel-topology');
  const { url, auth, tls, prefix, replicas } = config.nats;
  if (!url) throw new Error('invalid configuration: NATS_URL: the topology job runs against the NATS of a deployment');
  const nats = new NatsClient({ url, auth, tls, name: 'nettel-topology' }, log);
  await nats.start();
  try {
    await ensureJetStreamObjects(config, nats, log);
  } finally {
    await nats.stop();
  }
  log.info({ prefix, replicas }, 'jetstream topology ensured');
}

main().catch((err) => {
  process.stderr.write(`nettel-topology failed: ${(err as Error).stack ?? err}\n`);
  process.exit(1);
});
