import os from 'node:os';
import type { Logger } from '../observability/logger';
import { AuditHeads } from '../streams/audit-heads';
import { Lease } from '../streams/lease';
import { Locks, defaultLockConfig } from '../streams/locks';
import { MitigationLedger } from '../streams/mitigation-ledger';
import type { NatsClient } from '../streams/nats-client';
import { outboxConsumer } from '../streams/outbox';
import { putConsumer } from '../streams/put-stream';
import { names } from '../streams/names';
import { QueryBudgetBucket } from '../streams/query-budget-bucket';
import { defaultTopology, ensureTopology, type TopologyConfig } from '../streams/topology';
import { automationStarterConsumer } from '../workers/governance/automation-starter';
import { speakerLeaseKey } from '../workers/mitigation/reconciler-lease';
import { notifierConsumers } from '../workers/webhooks/webhook-notifier';
import type { Config } from './config';
import { sessionBucketOf, signInBucketOf } from './console-sessions';

/** Each workspace's query budget, as the api role and the topology job open it (QUERY_BUDGET_*). */
export const queryBudgetBucketOf = (config: Config, nats: NatsClient) =>
  new QueryBudgetBucket({
    nats,
    prefix: config.nats.prefix,
    replicas: config.nats.replicas,
    budget: { ratePerSecond: config.queryBudget.unitsPerMinute / 60, capacity: config.queryBudget.burstUnits },
  });

/** The lease of the BGP speaker at `speakerAddress`: whichever temporal-worker holds it is the one that changes the speaker. */
export const speakerLeaseOf = (config: Config, nats: NatsClient, speakerAddress: string) =>
  new Lease(
    { bucket: names(config.nats.prefix).speakerLeasesBucket, key: speakerLeaseKey(speakerAddress, os.hostname()), ttlMs: config.mitigationReconciler.leaseTtlMs, replicas: config.nats.replicas },
    nats,
  );

/** The telemetry streams and the writers' consumer, as the configuration sizes them. */
export function topologyOf(config: Config): TopologyConfig {
  const { prefix, streamMaxBytes, ackWaitMs, replicas } = config.nats;
  return { ...defaultTopology(prefix), maxBytes: streamMaxBytes, ackWaitMs, replicas, deadLetterMaxBytes: config.deadLetter.maxBytes };
}

/**
 * Every JetStream object the roles use: the streams, the durable consumers
 * and the key-value buckets. Each start ensures them; one that finds them as
 * configured changes nothing, so the roles of a deployment, whose NATS users
 * may not change the topology (deploy/nats/nettel.conf), start on what the
 * topology job (service/nats-topology.ts, the admin user) made.
 */
export async function ensureJetStreamObjects(config: Config, nats: NatsClient, log: Logger): Promise<void> {
  const { prefix, replicas } = config.nats;
  await ensureTopology(nats.jsm, topologyOf(config));
  // The buckets are made by opening them as their owners do.
  const buckets = [
    new Locks({ ...defaultLockConfig(prefix), replicas }, nats, log),
    new AuditHeads(nats, prefix, replicas),
    new MitigationLedger({ nats, prefix, replicas }),
    // The bucket is every speaker's; the address only names a key, which opening does not write.
    speakerLeaseOf(config, nats, 'any'),
    sessionBucketOf(config, nats),
    signInBucketOf(config, nats),
    queryBudgetBucketOf(config, nats),
  ];
  for (const bucket of buckets) {
    await bucket.start();
    await bucket.stop();
  }
  for (const c of [...Object.values(notifierConsumers({ prefix, timeoutMs: config.webhooks.timeoutMs })), automationStarterConsumer(prefix)]) {
    await putConsumer(nats.jsm, c.stream, outboxConsumer(c.durable, c.ackWaitMs));
  }
}
