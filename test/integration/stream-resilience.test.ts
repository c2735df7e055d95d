import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort, type LocalProcess } from '../../engines/local-process';
import { createLogger } from '../../observability/logger';
import { testNatsServer } from '../support/nats-server';
import { startTestStack, type TestStack } from '../support/test-stack';
import { waitFor, waitForTelemetryDrained } from '../support/wait';
import { names } from '../../streams/names';

/**
 * The stream worker under a steady load of posts while its consumer is taken
 * away: the durable consumer deleted, then nats-server restarted. This file
 * runs its own nats-server (the shared one of the global set-up stays
 * untouched). Clients retry a post that was not acknowledged, with the same
 * Idempotency-Key, as a real client would; at the end every acknowledged
 * record is in ClickHouse exactly once.
 */
const flowsPerPost = 20;
const clients = 3;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Posts NDJSON batches of flows from a few clients until stopped; counts what the API acknowledged. */
class SteadyLoad {
  acknowledgedPosts = 0;
  acknowledgedFlows = 0;
  acknowledgedBytes = 0;
  retries = 0;
  private running = true;
  private readonly clientsDone: Promise<void>[];

  constructor(
    private readonly t: TestStack,
    private readonly key: string,
  ) {
    this.clientsDone = Array.from({ length: clients }, () => this.client());
  }

  private async client(): Promise<void> {
    while (this.running) {
      const flows = Array.from({ length: flowsPerPost }, (_, i) => ({
        src_ip: `10.0.0.${i + 1}`,
        dst_ip: `10.1.0.${Math.floor(Math.random() * 50)}`,
        bytes: 40 + Math.floor(Math.random() * 10_000),
        packets: 1 + i,
        protocol: 'tcp',
        timestamp: Date.now() - 1_000,
      }));
      await this.postUntilAcknowledged(flows.map((f) => JSON.stringify(f)).join('\n'), randomUUID());
      this.acknowledgedPosts += 1;
      this.acknowledgedFlows += flows.length;
      this.acknowledgedBytes += flows.reduce((sum, f) => sum + f.bytes, 0);
    }
  }

  /** A post that got 503 or lost its connection may or may not be stored: it is sent again, the same. */
  private async postUntilAcknowledged(body: string, idempotencyKey: string): Promise<void> {
    for (;;) {
      const status = await this.t
        .request('POST', '/flow', { key: this.key, raw: body, contentType: 'application/x-ndjson', headers: { 'Idempotency-Key': idempotencyKey } })
        .then((res) => res.status, () => 'connection lost' as const);
      if (status === 201) return;
      if (status !== 503 && status !== 'connection lost') throw new Error(`post refused with ${status}`);
      this.retries += 1;
      await sleep(100);
    }
  }

  /** Lets every client finish the post it is on: a post stops only once acknowledged. */
  async stop(): Promise<void> {
    this.running = false;
    await Promise.all(this.clientsDone);
  }
}

/** Runs `round` again and again, `pauseMs` apart, until stopped; stop() resolves with what the rounds kept. */
class Poller<T> {
  private running = true;
  private readonly done: Promise<void>;

  constructor(
    readonly kept: T,
    round: (kept: T) => Promise<void>,
    pauseMs: number,
  ) {
    this.done = (async () => {
      while (this.running) {
        await round(this.kept);
        await sleep(pauseMs);
      }
    })();
  }

  async stop(): Promise<T> {
    this.running = false;
    await this.done;
    return this.kept;
  }
}

/** Polls /healthz without pause and keeps what the stream-workers loop said, in order. */
const healthWatch = (t: TestStack) =>
  new Poller<string[]>([], async (states) => {
    const res = await t.request<{ loops: Record<string, { status: string }> }>('GET', '/healthz').catch(() => undefined);
    const state = res?.body?.loops?.['stream-workers']?.status;
    if (state && states.at(-1) !== state) states.push(state);
  }, 5);

/** Scrapes /metrics now and then and keeps the highest value each series showed. */
const metricsWatch = (t: TestStack) =>
  new Poller(new Map<string, number>(), async (highest) => {
    const res = await t.request('GET', '/metrics', { key: t.adminKey }).catch(() => undefined);
    for (const [series, value] of parseMetrics(res?.text ?? '')) highest.set(series, Math.max(value, highest.get(series) ?? -Infinity));
  }, 50);

function parseMetrics(text: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const line of text.split('\n')) {
    const m = /^([a-z_]+)(\{[^}]*\})? (\S+)$/.exec(line);
    if (m) out.set(`${m[1]}${m[2] ?? ''}`, Number(m[3]));
  }
  return out;
}

/** The sum over a metric's series whose name and labels start as given. */
const metricOf = (metrics: Map<string, number>, prefix: string) =>
  [...metrics].filter(([series]) => series.startsWith(prefix)).reduce((sum, [, v]) => sum + v, 0);

describe('stream worker resilience', () => {
  let dir: string;
  let nats: LocalProcess;
  let t: TestStack;

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'nettel-resilience-'));
    const port = await freePort();
    nats = testNatsServer(path.join(dir, 'nats'), port, createLogger('silent'));
    await nats.start();
    // A short ack wait bounds how long a message whose ack was lost waits for its redelivery.
    t = await startTestStack('chdb', { NATS_URL: `nats://127.0.0.1:${port}`, NATS_ACK_WAIT_MS: '3000', WORKER_MAX_MESSAGES: '32', WORKER_MAX_WAIT_MS: '250' });
  });
  afterAll(async () => {
    await t.stop();
    await nats.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const n = () => names(t.stack.config.nats.prefix);

  async function restarts(reason: string): Promise<number> {
    const metric = t.stack.registry.getSingleMetric('nettel_worker_consume_restarts_total');
    return (await metric!.get()).values.find((v) => v.labels.reason === reason)?.value ?? 0;
  }

  /**
   * Restarts for a consumer that is gone, whichever status said so: 409 to a pull waiting when it was
   * deleted, 404 to one asked for after, or 503 no responders to a pull published before it is made again.
   */
  const goneReasons = ['consumer_deleted', 'consumer_not_found', 'no_responders'];
  async function consumerGone(): Promise<number> {
    let sum = 0;
    for (const reason of goneReasons) sum += await restarts(reason);
    return sum;
  }

  async function stored(orgId: string): Promise<{ flows: number; distinctEvents: number; bytes: number }> {
    const rows = await t.stack.clickhouse.query<{ n: string; ids: string; b: string }>(
      `SELECT count() AS n, uniqExact(event_id) AS ids, sum(bytes) AS b FROM ${t.stack.clickhouse.database}.flows WHERE org_id = '${orgId}'`,
    );
    return { flows: Number(rows[0]!.n), distinctEvents: Number(rows[0]!.ids), bytes: Number(rows[0]!.b) };
  }

  async function progress(load: SteadyLoad, posts: number, what: string): Promise<void> {
    const target = load.acknowledgedPosts + posts;
    await waitFor(() => Promise.resolve(load.acknowledgedPosts >= target ? true : undefined), 30_000, what);
  }

  async function healthy(): Promise<void> {
    await waitFor(async () => ((await t.request<{ status: string }>('GET', '/healthz')).body?.status === 'ok' ? true : undefined), 30_000, '/healthz ok');
  }

  test('a deleted durable consumer is recreated and every acknowledged record is stored exactly once', async () => {
    const minted = await t.mintKey({ role: 'operator' });
    const before = await consumerGone();
    const health = healthWatch(t);
    const metrics = metricsWatch(t);
    const load = new SteadyLoad(t, minted.key);
    try {
      await progress(load, 40, 'posts before the deletion');
      await t.stack.nats.jsm.consumers.delete(n().stream, n().writers);
      await waitFor(async () => ((await consumerGone()) > before ? true : undefined), 15_000, 'the worker to re-open').catch(async (err: Error) => {
        const metric = t.stack.registry.getSingleMetric('nettel_worker_consume_restarts_total');
        throw new Error(`${err.message}; restarts by reason: ${JSON.stringify((await metric!.get()).values.map((v) => [v.labels.reason, v.value]))}`);
      });
      await waitFor(async () => (await t.stack.nats.jsm.consumers.info(n().stream, n().writers)) && true, 15_000, 'the consumer to be recreated');
      await healthy();
      await progress(load, 40, 'posts after the consumer came back');
    } finally {
      await load.stop();
    }
    // Wait on state, not time: nothing left in the stream, nothing to deliver, nothing awaiting an ack.
    await waitForTelemetryDrained(t.stack.nats.jsm, t.stack.config.nats.prefix, 45_000);
    const states = await health.stop();
    const scraped = await metrics.stop();

    expect(await stored(minted.org_id)).toEqual({ flows: load.acknowledgedFlows, distinctEvents: load.acknowledgedFlows, bytes: load.acknowledgedBytes });
    expect(states).toEqual(['up', 'down', 'up']);
    expect(goneReasons.map((r) => metricOf(scraped, `nettel_worker_consume_restarts_total{reason="${r}"}`)).reduce((a, b) => a + b, 0)).toBeGreaterThan(before);
    expect([...scraped.keys()]).toContain(`nettel_stream_consumer_pending_messages{consumer="${n().writers}"}`);
    expect(metricOf(scraped, 'nettel_stream_consumer_ack_pending_messages')).toBeGreaterThan(0);
    expect(metricOf(scraped, 'nettel_stream_oldest_unwritten_age_seconds')).toBeGreaterThan(0);
    expect(metricOf(scraped, 'nettel_worker_clickhouse_write_seconds_count{table="flows"}')).toBeGreaterThan(0);
    expect(metricOf(scraped, 'nettel_worker_write_batch_rows_sum{table="flows"}')).toBeGreaterThan(0);
  });

  test('a nats-server restart under load leaves every acknowledged record stored exactly once', async () => {
    const minted = await t.mintKey({ role: 'operator' });
    const before = await restarts('disconnected');
    const health = healthWatch(t);
    const metrics = metricsWatch(t);
    const load = new SteadyLoad(t, minted.key);
    try {
      await progress(load, 40, 'posts before the restart');
      await nats.stop();
      await waitFor(() => Promise.resolve(health.kept.includes('down') ? true : undefined), 15_000, '/healthz to report the worker down');
      await nats.start();
      await healthy();
      await progress(load, 40, 'posts after the restart');
    } finally {
      await load.stop();
    }
    // Wait on state, not time: nothing left in the stream, nothing to deliver, nothing awaiting an ack.
    await waitForTelemetryDrained(t.stack.nats.jsm, t.stack.config.nats.prefix, 45_000);
    const states = await health.stop();
    const scraped = await metrics.stop();

    expect(load.retries).toBeGreaterThan(0);
    expect(await stored(minted.org_id)).toEqual({ flows: load.acknowledgedFlows, distinctEvents: load.acknowledgedFlows, bytes: load.acknowledgedBytes });
    expect(states[0]).toBe('up');
    expect(states).toContain('down');
    expect(states.at(-1)).toBe('up');
    expect(await restarts('disconnected')).toBeGreaterThan(before);
    expect(metricOf(scraped, 'nettel_stream_consumer_ack_pending_messages')).toBeGreaterThan(0);
    expect(metricOf(scraped, 'nettel_worker_clickhouse_write_seconds_count{table="flows"}')).toBeGreaterThan(0);
  });
});
