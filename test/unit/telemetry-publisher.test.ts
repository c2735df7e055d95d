import type { MsgHdrs } from 'nats';
import { Registry } from 'prom-client';
import { AppError } from '../../core/errors';
import type { StreamKind } from '../../core/telemetry';
import { metricTotal } from '../support/metrics';
import { telemetryHeaderNames } from '../../core/telemetry-headers';
import { TelemetryPublisher, type PublishConnection, type TelemetryBatch } from '../../streams/telemetry-publisher';

/**
 * The publisher against a plain object standing for the NATS client: each
 * publish is recorded and answered when and how the test says.
 */
interface Published {
  subject: string;
  lines: string[];
  bytes: number;
  msgID: string;
  headers: MsgHdrs;
  ack(answer?: { duplicate: boolean }): void;
  fail(err: Error): void;
}

/** Headers leave room for this many bytes below the server's payload limit. */
const headerRoom = 4096;

function fakeConnection(opts: { maxPayload?: number; connected?: boolean; autoAck?: { duplicate: boolean } } = {}) {
  const published: Published[] = [];
  let announce: (() => void) | undefined;
  const connection: PublishConnection = {
    isConnected: opts.connected ?? true,
    nc: { info: { max_payload: opts.maxPayload ?? 1024 * 1024 } },
    js: () => ({
      publish: (subject, data, { msgID, headers }) =>
        new Promise((resolve, reject) => {
          const text = Buffer.from(data).toString();
          published.push({
            subject,
            lines: text.split('\n').filter(Boolean),
            bytes: data.length,
            msgID,
            headers,
            ack: (answer = { duplicate: false }) => resolve(answer),
            fail: reject,
          });
          if (opts.autoAck) resolve(opts.autoAck);
          announce?.();
        }),
    }),
  };
  /** Resolves once `count` messages were handed to JetStream. */
  const publishedCount = (count: number) =>
    new Promise<Published[]>((resolve) => {
      const check = () => {
        if (published.length >= count) resolve(published);
        else announce = check;
      };
      check();
    });
  return { connection, published, publishedCount };
}

const batch = (orgId: string, kind: StreamKind, lines: string[], batchId = `${orgId}.${kind}.b${lines.length}`): TelemetryBatch => ({
  kind,
  orgId,
  batchId,
  lines,
  minTs: 1_000,
  maxTs: 2_000,
});
const records = (prefix: string, count: number, width = 10) =>
  Array.from({ length: count }, (_, i) => JSON.stringify({ id: `${prefix}-${i}`, pad: 'p'.repeat(width) }));

/** Lets every callback already queued run: what a settled promise would have done by now. */
const settle = () => new Promise((resolve) => setImmediate(resolve));

function publisherOver(connection: PublishConnection) {
  const registry = new Registry();
  return { publisher: new TelemetryPublisher({ nats: connection, prefix: 'tu', registry }), registry };
}

describe('telemetry publisher', () => {
  test('small requests of one org and kind in one event-loop turn share one message', async () => {
    const { connection, published } = fakeConnection({ autoAck: { duplicate: false } });
    const { publisher } = publisherOver(connection);
    await Promise.all([
      publisher.publish(batch('org_a', 'flow', records('a', 2))),
      publisher.publish(batch('org_a', 'flow', records('b', 3))),
      publisher.publish(batch('org_a', 'flow', records('c', 1))),
    ]);
    expect(published).toHaveLength(1);
    expect(published[0]!.subject).toBe('tu.tel.flow.org_a');
    expect(published[0]!.lines).toEqual([...records('a', 2), ...records('b', 3), ...records('c', 1)]);
    expect(published[0]!.headers.get(telemetryHeaderNames.count)).toBe('6');
  });

  test('requests of other orgs or other kinds in the same turn go in messages of their own', async () => {
    const { connection, published } = fakeConnection({ autoAck: { duplicate: false } });
    const { publisher } = publisherOver(connection);
    await Promise.all([
      publisher.publish(batch('org_a', 'flow', records('a', 1))),
      publisher.publish(batch('org_b', 'flow', records('b', 1))),
      publisher.publish(batch('org_a', 'signal', records('c', 1))),
    ]);
    expect(published.map((p) => p.subject).sort()).toEqual(['tu.tel.flow.org_a', 'tu.tel.flow.org_b', 'tu.tel.signal.org_a']);
  });

  test('each request of a shared message resolves only after JetStream acknowledged it', async () => {
    const { connection, publishedCount } = fakeConnection();
    const { publisher } = publisherOver(connection);
    const settled: string[] = [];
    const first = publisher.publish(batch('org_a', 'flow', records('a', 1))).then(() => settled.push('first'));
    const second = publisher.publish(batch('org_a', 'flow', records('b', 1))).then(() => settled.push('second'));
    const [message] = await publishedCount(1);
    await settle();
    expect(settled).toEqual([]);
    message!.ack();
    await Promise.all([first, second]);
    expect(settled).toEqual(['first', 'second']);
  });

  test('a group never grows past the server payload limit, and no request straddles two messages', async () => {
    const maxPayload = headerRoom + 2_000;
    const { connection, published } = fakeConnection({ maxPayload, autoAck: { duplicate: false } });
    const { publisher } = publisherOver(connection);
    // Twelve requests of about 600 bytes each: three fit under the 2,000-byte limit, a fourth does not.
    const requests = Array.from({ length: 12 }, (_, i) => records(`r${i}`, 6, 70));
    await Promise.all(requests.map((lines) => publisher.publish(batch('org_a', 'flow', lines))));
    expect(published.length).toBeGreaterThanOrEqual(4);
    for (const message of published) expect(message.bytes).toBeLessThanOrEqual(maxPayload - headerRoom);
    for (const lines of requests) {
      const holders = published.filter((m) => m.lines.includes(lines[0]!));
      expect(holders).toHaveLength(1);
      expect(holders[0]!.lines).toEqual(expect.arrayContaining(lines));
    }
    expect(published.flatMap((m) => m.lines).sort()).toEqual(requests.flat().sort());
  });

  test('an Idempotency-Key request is published alone under its own message id', async () => {
    const { connection, published } = fakeConnection({ autoAck: { duplicate: false } });
    const { publisher } = publisherOver(connection);
    const keyed = batch('org_a', 'signal', records('keyed', 2), 'org_a.signal.0123456789abcdef');
    await Promise.all([
      publisher.publish(batch('org_a', 'signal', records('loose', 1))),
      publisher.publish(keyed, { coalesce: false }),
      publisher.publish(batch('org_a', 'signal', records('loose2', 1))),
    ]);
    expect(published).toHaveLength(2);
    const own = published.find((m) => m.msgID === keyed.batchId);
    expect(own?.lines).toEqual(keyed.lines);
    const shared = published.find((m) => m.msgID !== keyed.batchId);
    expect(shared?.lines).toEqual([...records('loose', 1), ...records('loose2', 1)]);
  });

  test('a batch with deterministic event ids is marked for the workers\' duplicate check, and a coalesced message is not', async () => {
    const { connection, published } = fakeConnection({ autoAck: { duplicate: false } });
    const { publisher } = publisherOver(connection);
    const keyed = { ...batch('org_a', 'flow', records('keyed', 2), 'org_a.flow.0123456789abcdef'), idempotent: true };
    await Promise.all([publisher.publish(batch('org_a', 'flow', records('loose', 1))), publisher.publish(keyed), publisher.publish(batch('org_a', 'flow', records('loose2', 1)))]);
    const marks = Object.fromEntries(published.map((m) => [m.msgID === keyed.batchId ? 'keyed' : 'coalesced', m.headers.get(telemetryHeaderNames.idempotent)]));
    expect(marks).toEqual({ keyed: '1', coalesced: '' });
  });

  test('a failed publish rejects every request of the message with 503 UNAVAILABLE, keeping the cause', async () => {
    const { connection, publishedCount } = fakeConnection();
    const { publisher, registry } = publisherOver(connection);
    const waiters = [1, 2, 3].map((i) => publisher.publish(batch('org_a', 'metric', records(`m${i}`, 1))).catch((err: unknown) => err));
    const [message] = await publishedCount(1);
    const cause = new Error('TIMEOUT');
    message!.fail(cause);
    const errors = await Promise.all(waiters);
    for (const err of errors) {
      expect(err).toBeInstanceOf(AppError);
      expect(err).toMatchObject({ code: 'UNAVAILABLE', status: 503, message: 'telemetry log (NATS JetStream) is unavailable, retry later', cause });
    }
    expect(await metricTotal(registry, 'nettel_engine_errors_total')).toBe(1);
    expect(await metricTotal(registry, 'nettel_telemetry_accepted_total')).toBe(0);
  });

  test('a publish while NATS reconnects is refused at once with 503 and nothing is sent', async () => {
    const { connection, published } = fakeConnection({ connected: false });
    const { publisher } = publisherOver(connection);
    await expect(publisher.publish(batch('org_a', 'flow', records('a', 1)), { coalesce: false })).rejects.toMatchObject({
      code: 'UNAVAILABLE',
      status: 503,
    });
    expect(published).toHaveLength(0);
  });

  test('records of a first acknowledgement count as accepted, by kind', async () => {
    const { connection } = fakeConnection({ autoAck: { duplicate: false } });
    const { publisher, registry } = publisherOver(connection);
    await publisher.publish(batch('org_a', 'flow', records('a', 4)), { coalesce: false });
    expect((await registry.getSingleMetric('nettel_telemetry_accepted_total')!.get()).values).toEqual([
      expect.objectContaining({ labels: { kind: 'flow' }, value: 4 }),
    ]);
    expect(await metricTotal(registry, 'nettel_telemetry_duplicate_records_total')).toBe(0);
  });

  test('records of a JetStream duplicate acknowledgement count as duplicates, not as accepted', async () => {
    const { connection } = fakeConnection({ autoAck: { duplicate: true } });
    const { publisher, registry } = publisherOver(connection);
    await publisher.publish(batch('org_a', 'signal', records('a', 5)), { coalesce: false });
    expect((await registry.getSingleMetric('nettel_telemetry_duplicate_records_total')!.get()).values).toEqual([
      expect.objectContaining({ labels: { kind: 'signal' }, value: 5 }),
    ]);
    expect(await metricTotal(registry, 'nettel_telemetry_accepted_total')).toBe(0);
  });

  describe('a flow batch with its detection digest', () => {
    const withDigests = (prefix: string, count: number, width = 10): TelemetryBatch => {
      const lines = records(prefix, count, width);
      return { ...batch('org_a', 'flow', lines, `org_a.flow.${prefix}`), digests: lines.map((_, i) => `${prefix}\t${i}`) };
    };
    const parts = (p: Published, data = p.lines.join('\n') + '\n') => {
      const rowsBytes = Number(p.headers.get(telemetryHeaderNames.rowsBytes));
      return { rows: data.slice(0, rowsBytes).split('\n').filter(Boolean), digest: data.slice(rowsBytes).split('\n').filter(Boolean) };
    };

    test('travels after the rows in the same message, the rows\' length in its header', async () => {
      const { connection, published } = fakeConnection({ autoAck: { duplicate: false } });
      const { publisher } = publisherOver(connection);
      await publisher.publish(withDigests('a', 3), { coalesce: false });
      expect(parts(published[0]!)).toEqual({ rows: records('a', 3), digest: ['a\t0', 'a\t1', 'a\t2'] });
    });

    test("the rows' length counts the bytes of characters beyond ASCII, so the digest starts exactly where the header says", async () => {
      const { connection, published } = fakeConnection({ autoAck: { duplicate: false } });
      const { publisher } = publisherOver(connection);
      const lines = ['{"id":"é1","site":"Zürich"}', '{"id":"€2","site":"東京"}'];
      await publisher.publish({ ...batch('org_a', 'flow', lines, 'org_a.flow.utf8'), digests: ['d\t1', 'd\t2'] }, { coalesce: false });
      const data = Buffer.from(published[0]!.lines.join('\n') + '\n');
      const rowsBytes = Number(published[0]!.headers.get(telemetryHeaderNames.rowsBytes));
      expect(data.subarray(0, rowsBytes).toString()).toBe(lines.join('\n') + '\n');
      expect(data.subarray(rowsBytes).toString()).toBe('d\t1\nd\t2\n');
    });

    test("a batch split over messages keeps each row's digest line in the row's message", async () => {
      const maxPayload = headerRoom + 2_000;
      const { connection, published } = fakeConnection({ maxPayload, autoAck: { duplicate: false } });
      const { publisher } = publisherOver(connection);
      await publisher.publish(withDigests('s', 30, 70), { coalesce: false });
      expect(published.length).toBeGreaterThan(1);
      for (const message of published) {
        expect(message.bytes).toBeLessThanOrEqual(maxPayload - headerRoom);
        const { rows, digest } = parts(message);
        expect(digest).toEqual(rows.map((r) => `s\t${(JSON.parse(r) as { id: string }).id.slice(2)}`));
      }
    });

    test('a shared message holds a digest only when every request in it brought one', async () => {
      const { connection, published } = fakeConnection({ autoAck: { duplicate: false } });
      const { publisher } = publisherOver(connection);
      await Promise.all([publisher.publish(withDigests('a', 2)), publisher.publish(withDigests('b', 1))]);
      expect(parts(published[0]!)).toEqual({ rows: [...records('a', 2), ...records('b', 1)], digest: ['a\t0', 'a\t1', 'b\t0'] });
      await Promise.all([publisher.publish(withDigests('c', 2)), publisher.publish(batch('org_a', 'flow', records('d', 1)))]);
      expect(published[1]!.headers.has(telemetryHeaderNames.rowsBytes)).toBe(false);
      expect(published[1]!.lines).toEqual([...records('c', 2), ...records('d', 1)]);
    });
  });
});
