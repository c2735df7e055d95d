import { Registry } from 'prom-client';
import { recordEventId, requestPrefixOf } from '../../core/ids';
import { createLogger } from '../../observability/logger';
import { BatchWriter } from '../../workers/telemetry/batch-writer';
import { prefixVerdict } from '../../workers/telemetry/stored-rows';
import { streamWorkerMetrics } from '../../workers/telemetry/stream-worker-metrics';
import type { TelemetryWrites } from '../../workers/telemetry/stream-worker-ports';
import { storeHolding } from '../support/telemetry-writes';
import { message, type MessageOptions } from '../support/work-messages';

/**
 * How the stream worker checks rows that may be stored already (a
 * redelivery, a retry, an Idempotency-Key): a whole batch at once, per table
 * and workspace, by the request prefix of its event ids; id by id only where
 * a request is stored in part or its ids have another form. Plain objects: the
 * store counts the lookups.
 */
const log = createLogger('silent');

let nextRequest = 0;
/** A request's event ids: indexes [from, to) of a fresh request, or of `hex`'s. */
function request(from: number, to: number, hex = (nextRequest += 1).toString(16).padStart(16, '0')) {
  const ids = Array.from({ length: to - from }, (_, i) => recordEventId(hex, from + i));
  return { hex, ids };
}

const rowsOf = (ids: string[], org = 'org_a') => ids.map((event_id) => ({ org_id: org, event_id, ts: 1_000, bytes: 10, service: 's', environment: 'e', region: 'r' }));
const redelivered = (ids: string[], opts: MessageOptions = {}) => message({ rows: rowsOf(ids, opts.org), deliveries: 2, ...opts });

function writerWith(store: TelemetryWrites) {
  const registry = new Registry();
  const writer = new BatchWriter({ store, correlator: { recompute: () => Promise.resolve([]) }, metrics: streamWorkerMetrics(registry), log, mayHaveACopy: () => false });
  return { writer, registry };
}

const written = (inserts: Array<{ rows: Array<{ event_id: string }> }>) => inserts.flatMap((i) => i.rows.map((r) => r.event_id));

describe('stream worker checks of stored rows', () => {
  test('a redelivered batch of 256 messages costs one counts query per table and workspace, and no lookup by id', async () => {
    const requests = Array.from({ length: 256 }, () => request(0, 20));
    const stored = requests.filter((_, i) => i % 2 === 0).flatMap((r) => r.ids);
    const { store, inserts, lookups, prefixQueries } = storeHolding(stored);
    const batch = requests.map((r, i) => redelivered(r.ids, { org: i % 4 < 2 ? 'org_a' : 'org_b', kind: i % 8 < 4 ? 'flow' : 'signal' }));
    await writerWith(store).writer.process(batch);
    expect(prefixQueries.map((q) => `${q.table} ${q.org} ${q.prefixes.length}`).sort()).toEqual(['flows org_a 64', 'flows org_b 64', 'signals org_a 64', 'signals org_b 64']);
    expect(lookups).toEqual([]);
    expect(written(inserts).sort()).toEqual(requests.filter((_, i) => i % 2 === 1).flatMap((r) => r.ids).sort());
  });

  test('a request ClickHouse holds in part is looked up id by id, alone, and only its missing rows are written', async () => {
    const [whole, part, none] = [request(0, 10), request(0, 10), request(0, 10)];
    const { store, inserts, lookups } = storeHolding([...whole.ids, ...part.ids.slice(0, 4)]);
    await writerWith(store).writer.process([redelivered(whole.ids), redelivered(part.ids), redelivered(none.ids)]);
    expect(lookups).toEqual([part.ids]);
    expect(written(inserts)).toEqual([...part.ids.slice(4), ...none.ids]);
  });

  test('a run of a request whose other run is stored (a request published in two messages) is written, not taken for stored', async () => {
    const first = request(0, 10);
    const second = request(10, 20, first.hex);
    const { store, inserts, lookups } = storeHolding(first.ids);
    await writerWith(store).writer.process([redelivered(second.ids)]);
    expect(lookups).toEqual([]);
    expect(written(inserts)).toEqual(second.ids);
  });

  test('a run between two stored runs of its request is looked up id by id and written', async () => {
    const [before, middle] = [request(0, 10), request(10, 20)];
    const after = request(20, 30, middle.hex);
    const stored = [...request(0, 10, middle.hex).ids, ...after.ids];
    const { store, inserts, lookups } = storeHolding([...before.ids, ...stored]);
    await writerWith(store).writer.process([redelivered(middle.ids)]);
    expect(lookups).toEqual([middle.ids]);
    expect(written(inserts)).toEqual(middle.ids);
  });

  test('ids of another form are looked up id by id, beside the requests of the same batch', async () => {
    const req = request(0, 5);
    const { store, inserts, lookups, prefixQueries } = storeHolding([...req.ids, 'evt_old_1']);
    await writerWith(store).writer.process([redelivered(req.ids), redelivered(['evt_old_1', 'evt_old_2'])]);
    expect(prefixQueries).toHaveLength(1);
    expect(lookups).toEqual([['evt_old_1', 'evt_old_2']]);
    expect(written(inserts)).toEqual(['evt_old_2']);
  });

  test('two copies of a request pulled together, neither stored, are written once', async () => {
    const req = request(0, 5);
    const { store, inserts } = storeHolding([]);
    await writerWith(store).writer.process([redelivered(req.ids), redelivered(req.ids)]);
    expect(written(inserts)).toEqual(req.ids);
  });

  test('the counts query covers each message\'s times, an Idempotency-Key batch a day further back, overlapping times merged', async () => {
    const day = 24 * 3_600_000;
    const { store, prefixQueries } = storeHolding([]);
    const [a, b, c] = [request(0, 2), request(0, 2), request(0, 2)];
    const batch = [
      redelivered(a.ids, { times: [5 * day, 5 * day + 100] }),
      redelivered(b.ids, { times: [5 * day + 50, 5 * day + 200] }),
      message({ rows: rowsOf(c.ids), idempotent: true, times: [9 * day, 9 * day + 10] }),
    ];
    await writerWith(store).writer.process(batch);
    expect(prefixQueries.map((q) => q.ranges)).toEqual([[[5 * day, 5 * day + 200], [8 * day, 9 * day + 10]]]);
  });

  test('checked rows are counted by how they were settled', async () => {
    const req = request(0, 3);
    const { store } = storeHolding(req.ids);
    const { writer, registry } = writerWith(store);
    await writer.process([redelivered(req.ids), redelivered(['evt_old_1'])]);
    const checked = (await registry.getSingleMetric('nettel_worker_rows_checked_total')!.get()).values;
    expect(checked.map((v) => [v.labels.by, v.value])).toEqual([['request', 3], ['event_id', 1]]);
  });
});

describe('verdict on a request prefix', () => {
  test('a record event id is evt_, its request\'s 16 hex digits and its index in 6; the request prefix is its first 20 characters', () => {
    expect(recordEventId('0123456789abcdef', 255)).toBe('evt_0123456789abcdef0000ff');
    expect(requestPrefixOf('evt_0123456789abcdef0000ff')).toBe('evt_0123456789abcdef');
    expect([requestPrefixOf('evt_0123456789abcdef0000FF'), requestPrefixOf('evt_0123456789abcdef00ff'), requestPrefixOf('inc_0123456789abcdef0000ff')]).toEqual([undefined, undefined, undefined]);
  });

  const ids = request(4, 8).ids;
  const held = (from: number, to: number, hex: string) => {
    const r = request(from, to, hex).ids;
    return { ids: r.length, lo: r[0]!, hi: r[r.length - 1]! };
  };
  const hex = ids[0]!.slice(4, 20);

  test.each([
    ['nothing stored', 'none', undefined],
    ['exactly these ids stored', 'all', held(4, 8, hex)],
    ['other ids of the request stored, all before these', 'none', held(0, 4, hex)],
    ['other ids of the request stored, all after these', 'none', held(8, 12, hex)],
    ['some of these ids stored', 'some', held(5, 8, hex)],
    ['these ids and others stored', 'some', held(0, 12, hex)],
  ] as const)('%s: %s', (_name, verdict, stored) => {
    expect(prefixVerdict(ids, stored)).toBe(verdict);
  });

  test('ids that are not one run are never taken as all stored from a count', () => {
    const gapped = [...request(0, 2, hex).ids, ...request(3, 5, hex).ids];
    expect(prefixVerdict(gapped, { ids: 4, lo: gapped[0]!, hi: gapped[3]! })).toBe('some');
  });
});
