import { natsMaxPayload } from '../../engines/engines';
import { generateFlows } from '../support/flows';
import { startTestStack, type TestStack } from '../support/test-stack';
import { waitForTelemetryDrained } from '../support/wait';
import { names } from '../../streams/names';

/**
 * The durable NATS the embedded default runs (the set-up's 2.15.2, payloads
 * of at most 8 MiB), and what it means for the largest request: a body near
 * the 10 MiB limit grows past one message once stamped, so it travels as
 * several, and a retry with its Idempotency-Key is still stored once.
 */
describe('a request larger than one NATS message', () => {
  let t: TestStack;
  // About 9.5 MiB of NDJSON: under the body limit, three to four times the payload limit once stamped.
  const flows = generateFlows(80_000, 80_000, 71);
  const body = flows.batches[0]!;

  beforeAll(async () => {
    t = await startTestStack('chdb');
  });
  afterAll(async () => {
    await t.stop();
  });

  const lastSeq = async () => (await t.stack.nats.jsm.streams.info(names(t.stack.config.nats.prefix).stream)).state.last_seq;

  async function storedRows(orgId: string): Promise<{ rows: number; ids: number }> {
    const ch = t.stack.clickhouse;
    const [row] = await ch.query<{ rows: string; ids: string }>(`SELECT count() AS rows, uniqExact(event_id) AS ids FROM ${ch.database}.flows WHERE org_id = '${orgId}'`);
    return { rows: Number(row?.rows), ids: Number(row?.ids) };
  }

  test('the test engines run nats-server 2.15.2 with a payload limit of 8 MiB', () => {
    expect(t.stack.nats.nc.info?.version).toBe('2.15.2');
    expect(t.stack.nats.nc.info?.max_payload).toBe(natsMaxPayload);
  });

  test('a request near the body limit travels as several messages and is stored whole', async () => {
    expect(Buffer.byteLength(body)).toBeGreaterThan(natsMaxPayload);
    expect(Buffer.byteLength(body)).toBeLessThan(t.stack.config.http.bodyLimitBytes);
    const minted = await t.mintKey({ role: 'operator' });
    const before = await lastSeq();
    const res = await t.request('POST', '/flow', { key: minted.key, raw: body, contentType: 'application/x-ndjson', headers: { 'Idempotency-Key': 'large-once' } });
    expect(res.status).toBe(201);
    expect((await lastSeq()) - before).toBeGreaterThan(1);
    await waitForTelemetryDrained(t.stack.nats.jsm, t.stack.config.nats.prefix, 120_000);
    expect(await storedRows(minted.org_id)).toEqual({ rows: flows.total, ids: flows.total });
  });

  test('the same request retried with its Idempotency-Key adds no message and no row', async () => {
    const minted = await t.mintKey({ role: 'operator' });
    const post = () => t.request('POST', '/flow', { key: minted.key, raw: body, contentType: 'application/x-ndjson', headers: { 'Idempotency-Key': 'large-retried' } });
    expect((await post()).status).toBe(201);
    const afterFirst = await lastSeq();
    expect((await post()).status).toBe(201);
    expect(await lastSeq()).toBe(afterFirst);
    await waitForTelemetryDrained(t.stack.nats.jsm, t.stack.config.nats.prefix, 120_000);
    expect(await storedRows(minted.org_id)).toEqual({ rows: flows.total, ids: flows.total });
  });
});
