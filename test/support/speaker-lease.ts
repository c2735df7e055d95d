import os from 'node:os';
import type { Logger } from '../../observability/logger';
import type { Registry } from '../../observability/metrics';
import { Lease } from '../../streams/lease';
import { names } from '../../streams/names';
import type { NatsClient } from '../../streams/nats-client';
import { defaultLeaseTtlMs } from '../../workers/mitigation/mitigation-reconciler.config';
import { ReconcilerLease, speakerLeaseKey } from '../../workers/mitigation/reconciler-lease';

/**
 * The BGP speaker's lease as a temporal-worker process holds it
 * (service/roles/mitigation.ts), on the tests' NATS under `prefix`: started,
 * and its bucket deleted by `remove()` once the test is done.
 */
export async function speakerLease(o: { nats: NatsClient; prefix: string; speakerAddress: string; registry: Registry; log: Logger; ttlMs?: number }) {
  const lease = new Lease(
    { bucket: names(o.prefix).speakerLeasesBucket, key: speakerLeaseKey(o.speakerAddress, os.hostname()), ttlMs: o.ttlMs ?? defaultLeaseTtlMs, replicas: 1 },
    o.nats,
  );
  await lease.start();
  return {
    lease,
    reconcilerLease: new ReconcilerLease(lease, { registry: o.registry, log: o.log }),
    remove: () => o.nats.jsm.streams.delete(`KV_${names(o.prefix).speakerLeasesBucket}`).catch(() => undefined),
  };
}
