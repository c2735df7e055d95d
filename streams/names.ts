import type { StreamKind } from '../core/telemetry';

/**
 * Every JetStream name of the service, derived from NATS_PREFIX: streams,
 * durable consumers, KV buckets and subjects, and the JetStream API error
 * codes the adapters branch on. deploy/nats/nettel.conf grants each role
 * these names; change one here and there together.
 */
export const names = (prefix: string) => {
  const upper = prefix.toUpperCase();
  return {
    /** Raw telemetry (streams/topology.ts): `<prefix>.tel.<kind>.<org>[.exp-<exporter>]`. */
    stream: `${upper}_TELEMETRY`,
    subjects: `${prefix}.tel.>`,
    /**
     * A collected flow's subject adds its exporter (`exp-` and the address with
     * `.` and `:` as `_`): one exporter's flows keep their order in the stream.
     */
    subject: (kind: StreamKind, orgId: string, exporter?: string) =>
      exporter === undefined ? `${prefix}.tel.${kind}.${orgId}` : `${prefix}.tel.${kind}.${orgId}.exp-${exporter.replace(/[.:]/g, '_')}`,
    /** The writers' lanes' durable consumers: bulk telemetry (flows, metric events), and correlation signals. */
    writers: `${upper}_WRITERS`,
    writersSubjects: [`${prefix}.tel.flow.>`, `${prefix}.tel.metric.>`],
    signals: `${upper}_SIGNALS`,
    signalsSubjects: [`${prefix}.tel.signal.>`],
    /** The rate detectors' feed (streams/detection-feed.ts): a copy of each written flow message, read by one detector at a time. */
    detection: `${upper}_DETECTION`,
    detectionSubjects: `${prefix}.detect.flow.>`,
    detectionSubject: (orgId: string) => `${prefix}.detect.flow.${orgId}`,
    detector: `${upper}_DETECTOR`,
    deadLetter: `${upper}_DEAD_LETTER`,
    deadLetterSubjects: `${prefix}.dead.>`,
    deadLetterSubject: (kind: string, orgId: string) => `${prefix}.dead.${kind}.${orgId}`,
    /** The embedded nats-server's liveness check (streams/jetstream-write-probe.ts). */
    health: `${upper}_HEALTH`,
    healthSubject: `${prefix}.health`,
    /** Core NATS, no stream: a revoked key reaches every API process at once. */
    keyRevokedSubject: `${prefix}.keys.revoked`,
    auditHeadsBucket: `${upper}_AUDIT_HEADS`,
    locksBucket: `${upper}_LOCKS`,
    /** The mitigations that should be announced now (streams/mitigation-ledger.ts). */
    mitigationsBucket: `${upper}_MITIGATIONS`,
    /** The lease of each BGP speaker: which temporal-worker reconciles it (streams/lease.ts); its keys live seconds. */
    speakerLeasesBucket: `${upper}_SPEAKER_LEASES`,
    /** The console's sessions, shared by every API process (streams/session-bucket.ts). */
    sessionsBucket: `${upper}_SESSIONS`,
    /** Sign-ins under way: written by unauthenticated requests, so short-lived and bounded in bytes. */
    signInsBucket: `${upper}_SIGN_INS`,
    /** Each workspace's query budget, shared by every API process (streams/query-budget-bucket.ts). */
    queryBudgetBucket: `${upper}_QUERY_BUDGET`,
  };
};

/** The notification outbox and its deliveries (streams/outbox.ts). */
export const outboxNames = (prefix: string) => ({
  outbox: `${prefix.toUpperCase()}_OUTBOX`,
  outboxSubjects: `${prefix}.outbox.>`,
  outboxSubject: (orgId: string) => `${prefix}.outbox.${orgId}`,
  fanout: `${prefix.toUpperCase()}_WEBHOOK_FANOUT`,
  deliveries: `${prefix.toUpperCase()}_WEBHOOK_DELIVERIES`,
  deliverySubjects: `${prefix}.whdeliver.>`,
  deliverySubject: (orgId: string, webhookId: string) => `${prefix}.whdeliver.${orgId}.${webhookId}`,
  deliverer: `${prefix.toUpperCase()}_WEBHOOK_DELIVERER`,
});

/** Incidents that may start automation runs, and their consumer (streams/automation-triggers.ts). */
export const automationNames = (prefix: string) => ({
  triggers: `${prefix.toUpperCase()}_AUTOMATION_TRIGGERS`,
  triggerSubjects: `${prefix}.autotrigger.>`,
  triggerSubject: (orgId: string) => `${prefix}.autotrigger.${orgId}`,
  starter: `${prefix.toUpperCase()}_AUTOMATION_STARTER`,
});

/** JetStream API error codes (err_code) the adapters branch on. */
export const jsErrors = {
  streamNotFound: 10059,
  consumerNotFound: 10014,
  insufficientStorage: 10047,
  /** "Wrong last sequence": a compare-and-set (or a create) lost to another writer (streams/kv-bucket.ts). */
  wrongLastSequence: 10071,
  /**
   * The same without the sequence: on a replicated stream (nats-server 2.12+), another write of the subject was
   * still being proposed when this one came. Two processes taking one lock at once get it.
   */
  wrongLastSequenceInFlight: 10164,
  /** A store failure; for a stream (a bucket) at its `max_bytes`, "maximum bytes exceeded". */
  storeFailed: 10077,
} as const;
export const apiErrorCode = (err: unknown) => (err as { api_error?: { err_code?: number } }).api_error?.err_code;
