import { DiscardPolicy, headers as natsHeaders } from 'nats';
import { Registry } from 'prom-client';
import { metricTotal } from '../support/metrics';
import { HttpClickHouse, type ClickHouse } from '../../storage/clickhouse';
import { telemetryHeaderEntries, telemetryHeaderNames } from '../../core/telemetry-headers';
import { type StreamWorkerConfig } from '../../workers/telemetry/stream-worker';
import { generateFlows, sortedEntries } from '../support/flows';
import { startTcpProxy } from '../support/tcp-proxy';
import { startTestStack, type TestStack } from '../support/test-stack';
import { waitFor, waitForTelemetryDrained } from '../support/wait';
import { streamWorkerOn } from '../support/stream-worker';
import { orgIs, storedCount } from '../support/stored-count';
import { names } from '../../streams/names';

/**
 * What a stream worker does when ClickHouse cannot take a message, on the
 * real engines (ClickHouse server over HTTP): a refusal of the rows goes to
 * the dead-letter stream, a network outage is retried until it clears and the
 * rows are then written once, and a full dead-letter stream keeps what it
 * holds while the refused message stays in the telemetry stream.
 */
const deadLetterMaxBytes = 8 * 1024;

describe('stream worker write failures', () => {
  let t: TestStack;
  beforeAll(async () => {
    t = await startTestStack('clickhouse-server', { ROLES: 'api', NATS_DEAD_LETTER_MAX_BYTES: String(deadLetterMaxBytes) });
  });
  afterAll(async () => {
    await t.stop();
  });

  const n = () => names(t.stack.config.nats.prefix);

  function workerOn(clickhouse: ClickHouse, config: Partial<StreamWorkerConfig> = {}) {
    const registry = new Registry();
    const worker = streamWorkerOn(t, { clickhouse, registry, config: { retryDelayMs: 50, ...config } });
    return { worker, registry };
  }

  async function postAll(key: string, batches: string[]) {
    for (const body of batches) expect((await t.request('POST', '/flow', { key, raw: body, contentType: 'application/x-ndjson' })).status).toBe(201);
  }

  /** A message the API would never publish: a row whose time is not a number, which ClickHouse refuses. */
  async function publishRefusedRow(orgId: string) {
    const h = natsHeaders();
    for (const [name, value] of telemetryHeaderEntries({ kind: 'flow', orgId, count: 1, minTs: 0, maxTs: 0 })) h.set(name, value);
    // A row of the right shape, so the stream workers' screen (core/row-shape.ts) lets it through, with values its columns refuse.
    await t.stack.nats.js().publish(n().subject('flow', orgId), Buffer.from(`{"org_id":"${orgId}","ts":1.5,"bytes":-1}\n`), { headers: h });
  }

  const flowsStored = (orgId: string) => storedCount(t.stack.clickhouse, 'flows', orgIs(orgId));

  async function bytesByDst(orgId: string): Promise<Map<string, number>> {
    const rows = await t.stack.clickhouse.query<{ dst_ip: string; b: string }>(
      `SELECT dst_ip, sum(bytes) AS b FROM ${t.stack.clickhouse.database}.flows WHERE org_id = '${orgId}' GROUP BY dst_ip`,
    );
    return new Map(rows.map((r) => [r.dst_ip, Number(r.b)]));
  }

  const failures = async (registry: Registry, cls: string) =>
    ((await registry.getSingleMetric('nettel_worker_write_failures_total')?.get())?.values ?? [])
      .filter((v) => v.labels.class === cls)
      .reduce((sum, v) => sum + v.value, 0);

  const deadLetterState = async () => (await t.stack.nats.jsm.streams.info(n().deadLetter)).state;

  test('a row ClickHouse refuses goes to the dead-letter stream as a permanent refusal, and the rest is written', async () => {
    const minted = await t.mintKey({ role: 'operator' });
    const good = generateFlows(1_000, 500, 31);
    await postAll(minted.key, good.batches);
    await publishRefusedRow(minted.org_id);
    const before = (await deadLetterState()).messages;
    const { worker, registry } = workerOn(t.stack.clickhouse, { maxDeliveries: 2 });
    await worker.start();
    try {
      await waitFor(async () => ((await deadLetterState()).messages === before + 1 ? true : undefined), 30_000, 'the dead letter');
      await waitForTelemetryDrained(t.stack.nats.jsm, t.stack.config.nats.prefix);
      expect(await flowsStored(minted.org_id)).toBe(good.total);
      expect(await failures(registry, 'permanent')).toBeGreaterThanOrEqual(2);
      expect(await failures(registry, 'transient')).toBe(0);
      const dead = await t.stack.nats.jsm.streams.getMessage(n().deadLetter, { seq: (await deadLetterState()).last_seq });
      expect(dead.header.get(telemetryHeaderNames.error)).toMatch(/clickhouse insert into flows failed/);
    } finally {
      await worker.stop();
    }
  });

  test('rows written while ClickHouse cannot be reached are retried past maxDeliveries, never dead-lettered, and stored once when it is back', async () => {
    const minted = await t.mintKey({ role: 'operator' });
    const flows = generateFlows(2_000, 500, 37);
    await postAll(minted.key, flows.batches);
    const server = new URL(t.stack.config.clickhouse.url!);
    const proxy = await startTcpProxy({ host: server.hostname, port: Number(server.port) });
    const proxied = new HttpClickHouse({ url: `http://127.0.0.1:${proxy.port}`, user: 'default', password: '', database: t.stack.clickhouse.database });
    await proxied.start();
    await proxy.down();
    const deadBefore = (await deadLetterState()).messages;
    const { worker, registry } = workerOn(proxied, { maxDeliveries: 2 });
    await worker.start();
    try {
      // Each of the four messages failed on its own more than maxDeliveries times.
      await waitFor(async () => ((await failures(registry, 'transient')) >= 4 * 3 ? true : undefined), 30_000, 'repeated transient failures');
      await expect(worker.probe()).rejects.toThrow(/writes failing since .* \(network\)/);
      expect(await flowsStored(minted.org_id)).toBe(0);
      await proxy.up();
      await waitForTelemetryDrained(t.stack.nats.jsm, t.stack.config.nats.prefix);
      expect(await flowsStored(minted.org_id)).toBe(flows.total);
      expect(sortedEntries(await bytesByDst(minted.org_id))).toEqual(sortedEntries(flows.bytesByDst));
      expect((await deadLetterState()).messages).toBe(deadBefore);
      expect(await metricTotal(registry, 'nettel_worker_dead_letters_total')).toBe(0);
      await expect(worker.probe()).resolves.toEqual({ detail: 'bulk: consuming; signals: consuming' });
    } finally {
      await worker.stop();
      await proxied.stop();
      await proxy.down();
    }
  });

  test('a full dead-letter stream refuses a new dead letter, which stays unacknowledged in the telemetry stream, and loses none it holds', async () => {
    const minted = await t.mintKey({ role: 'operator' });
    expect((await t.stack.nats.jsm.streams.info(n().deadLetter)).config.discard).toBe(DiscardPolicy.New);
    // Filled up to its bound with small dead letters on the very subject the next one takes: it does not fit,
    // and none of those is evicted for it (Debian's nats-server 2.9.10 did evict them, despite discard: new).
    const filler = Buffer.alloc(64, 'f');
    for (;;) {
      const refused = await t.stack.nats.js().publish(n().deadLetterSubject('flow', minted.org_id), filler).then(() => false, () => true);
      if (refused) break;
    }
    const full = await deadLetterState();
    await publishRefusedRow(minted.org_id);
    const { worker, registry } = workerOn(t.stack.clickhouse, { maxDeliveries: 1 });
    await worker.start();
    try {
      await waitFor(async () => ((await metricTotal(registry, 'nettel_worker_dead_letter_refusals_total')) >= 2 ? true : undefined), 30_000, 'two refused dead letters');
      const held = await deadLetterState();
      expect({ messages: held.messages, first: held.first_seq, last: held.last_seq }).toEqual({ messages: full.messages, first: full.first_seq, last: full.last_seq });
      expect((await t.stack.nats.jsm.streams.info(n().stream)).state.messages).toBe(1);
      expect(await metricTotal(registry, 'nettel_worker_dead_letters_total')).toBe(0);

      // Room again (an operator took the dead letters out): the waiting message is dead-lettered at its next delivery.
      await t.stack.nats.jsm.streams.purge(n().deadLetter);
      await waitFor(async () => ((await deadLetterState()).messages === 1 ? true : undefined), 30_000, 'the dead letter');
      await waitForTelemetryDrained(t.stack.nats.jsm, t.stack.config.nats.prefix);
    } finally {
      await worker.stop();
    }
  });
});
