import type { JetStreamManager } from 'nats';
import type { ClickHouse } from '../../storage/clickhouse';
import { names, outboxNames } from '../../streams/names';

/** Polls until `check` returns a value that is not undefined, or fails after `timeoutMs`. */
export async function waitFor<T>(check: () => Promise<T | undefined>, timeoutMs = 10_000, what = 'condition'): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value !== undefined) return value;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}${last ? `: ${last instanceof Error ? last.message : JSON.stringify(last)}` : ''}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/**
 * Waits until the stream workers have taken everything published so far: the
 * telemetry stream holds no message, and neither lane's consumer has one left
 * to deliver or awaiting an ack. Workers ack only after ClickHouse has the
 * rows and the correlator ran, so what was accepted before is all stored.
 */
export async function waitForTelemetryDrained(jsm: JetStreamManager, prefix: string, timeoutMs = 60_000): Promise<void> {
  const n = names(prefix);
  await waitFor(
    async () => {
      const [stream, ...consumers] = await Promise.all([jsm.streams.info(n.stream), ...[n.writers, n.signals].map((c) => jsm.consumers.info(n.stream, c))]);
      const drained = stream.state.messages === 0 && consumers.every((c) => c.num_pending === 0 && c.num_ack_pending === 0);
      if (drained) return true;
      // Thrown, not returned: a timeout then names what was left (waitFor reports the last error).
      const held = consumers.map((c) => `${c.name}: pending ${c.num_pending}, ack pending ${c.num_ack_pending}, redelivered ${c.num_redelivered}, waiting pulls ${c.num_waiting}`);
      throw new Error(`the stream holds ${stream.state.messages} messages; ${held.join('; ')}`);
    },
    timeoutMs,
    'the telemetry stream to drain',
  );
}

/**
 * Waits until the rate detectors hold nothing: the detection feed's copies
 * are all acknowledged (work-queue retention), which the detector does once
 * every window they count in is closed and its decisions are written (the
 * open windows close after 5 s without a flow).
 */
export async function waitForDetectionDrained(jsm: JetStreamManager, prefix: string, timeoutMs = 60_000): Promise<void> {
  const n = names(prefix);
  await waitFor(async () => ((await jsm.streams.info(n.detection)).state.messages === 0 ? true : undefined), timeoutMs, 'the detection feed to drain');
}

/**
 * Waits until a workspace's webhook events have all gone through: its
 * subjects of the outbox and of the deliveries hold no message. Both streams
 * keep a message until it is acknowledged (work-queue retention): the fan-out
 * acknowledges an event once its deliveries are queued, the deliverer a
 * delivery once delivered or given up; one to retry stays until then.
 */
export async function waitForWebhooksDrained(jsm: JetStreamManager, prefix: string, orgId: string, timeoutMs = 30_000): Promise<void> {
  const n = outboxNames(prefix);
  const held = async (stream: string, subjects: string) => (await jsm.streams.info(stream, { subjects_filter: subjects })).state.subjects ?? {};
  await waitFor(
    async () => {
      const [outbox, deliveries] = await Promise.all([held(n.outbox, n.outboxSubject(orgId)), held(n.deliveries, n.deliverySubject(orgId, '*'))]);
      return [...Object.values(outbox), ...Object.values(deliveries)].every((count) => count === 0) ? true : undefined;
    },
    timeoutMs,
    `the webhook events of ${orgId} to drain`,
  );
}

/** Waits until every mutation (ALTER … UPDATE/DELETE) of a table has been applied: ClickHouse runs them in the background. */
export async function waitForMutations(clickhouse: Pick<ClickHouse, 'query' | 'database'>, table: string, timeoutMs = 10_000): Promise<void> {
  await waitFor(
    async () => {
      const rows = await clickhouse.query<{ n: string }>(
        `SELECT count() AS n FROM system.mutations WHERE database = '${clickhouse.database}' AND table = '${table}' AND is_done = 0`,
      );
      return Number(rows[0]?.n) === 0 ? true : undefined;
    },
    timeoutMs,
    `the mutations of ${table}`,
  );
}
