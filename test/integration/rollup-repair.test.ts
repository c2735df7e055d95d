import { randomBytes } from 'node:crypto';
import { flowRowJson, parseFlow } from '../../core/flow';
import { recordEventId } from '../../core/ids';
import { viewFedRollups } from '../../storage/migrations/flow-tables';
import { foldedRollups } from '../../storage/migrations/folded-rollups';
import { RollupFold } from '../../storage/rollup-fold';
import { TelemetryStore } from '../../storage/telemetry-store';
import { generateFlows } from '../support/flows';
import { startTestStack, transports, type TestStack } from '../support/test-stack';

/**
 * A crash between the parts of one insert (ClickHouse writes the flows, then
 * each rollup view's part) leaves stored flows that no redelivery writes
 * again and rollups without them. Here the cut is made by detaching rollup
 * views during a write, on both engines; the repair gives each rollup what it
 * lacks from the stored flows, once.
 */
describe.each(transports)('rollups completed after a write cut between its parts on %s', (transport) => {
  let t: TestStack;
  let store: TelemetryStore;
  beforeAll(async () => {
    t = await startTestStack(transport, { ROLES: 'api' });
    store = new TelemetryStore(t.stack.clickhouse);
  });
  afterAll(async () => {
    await t.stop();
  });

  const db = () => t.stack.clickhouse.database;
  const query = <T>(sql: string) => t.stack.clickhouse.query<T>(sql);

  /** 300 flows of a fresh workspace as the API stamps them. */
  function flowRows(orgId: string): { ndjson: string; bytes: number } {
    const flows = generateFlows(300, 300, 7);
    const hex = randomBytes(7).toString('hex');
    const now = Date.now();
    const rows = flows.batches[0]!.split('\n').map((l, i) => flowRowJson(parseFlow(JSON.parse(l)).data!, { org_id: orgId, event_id: recordEventId(hex, i), ts: now, received_at: now }).json);
    return { ndjson: rows.join('\n') + '\n', bytes: flows.totalBytes };
  }

  /** Writes the rows with these rollup views detached, as a crash between the parts leaves them. */
  async function writeCut(orgId: string, cutViews: string[]): Promise<string> {
    for (const table of cutViews) await t.stack.clickhouse.exec(`DETACH TABLE ${db()}.${table}_mv`);
    try {
      await store.insert('flows', flowRows(orgId).ndjson);
    } finally {
      for (const table of cutViews) await t.stack.clickhouse.exec(`ATTACH TABLE ${db()}.${table}_mv`);
    }
    return writeOf(orgId);
  }

  async function writeOf(orgId: string): Promise<string> {
    const rows = await query<{ w: string }>(`SELECT DISTINCT toString(write_id) AS w FROM ${db()}.flows WHERE org_id = '${orgId}'`);
    expect(rows).toHaveLength(1);
    return rows[0]!.w;
  }

  const everyTable = ['flows', ...[...viewFedRollups, ...foldedRollups].map((r) => r.table)];

  /** Each rollup's flow and byte sums for the workspace, beside the raw table's, once the pending buckets are folded (the open one too). */
  async function sums(orgId: string): Promise<Record<string, string>> {
    await new RollupFold(t.stack.clickhouse).foldAll({ openToo: true });
    const out: Record<string, string> = {};
    for (const table of everyTable) {
      const [row] = await query<{ f: string; b: string }>(
        `SELECT ${table === 'flows' ? 'count()' : 'sum(flows)'} AS f, sum(bytes) AS b FROM ${db()}.${table} WHERE org_id = '${orgId}'`,
      );
      out[table] = `${row!.f} flows, ${row!.b} bytes`;
    }
    return out;
  }

  const allLike = (value: string) => Object.fromEntries(everyTable.map((table) => [table, value]));

  test('a rollup whose view missed a stored write gets the write from the stored flows', async () => {
    const orgId = `org_cut_${randomBytes(3).toString('hex')}`;
    const { bytes } = flowRows(orgId);
    const writeId = await writeCut(orgId, ['flows_1m', 'flows_src_1m']);

    const repaired = await store.completeRollups([writeId]);

    expect(repaired).toEqual([
      { table: 'flows_1m', writeId, outcome: 'refed' },
      { table: 'flows_src_1m', writeId, outcome: 'refed' },
    ]);
    expect(await sums(orgId)).toEqual(allLike(`300 flows, ${bytes} bytes`));
  });

  test('a write cut before its buckets were marked pending is folded into the 5-minute and hourly levels after the repair', async () => {
    const orgId = `org_marks_${randomBytes(3).toString('hex')}`;
    const { bytes } = flowRows(orgId);
    const writeId = await writeCut(orgId, ['flows_1m', 'rollup_marks']);

    expect(await store.completeRollups([writeId])).toEqual([{ table: 'flows_1m', writeId, outcome: 'refed' }]);
    expect(await sums(orgId)).toEqual(allLike(`300 flows, ${bytes} bytes`));
  });

  test('the dimension rollups have no view to miss a write: they take it from the raw flows when its buckets are folded', async () => {
    const orgId = `org_dims_${randomBytes(3).toString('hex')}`;
    const { bytes } = flowRows(orgId);
    await writeCut(orgId, []);
    const dims = (table: string) => query<{ n: string }>(`SELECT toString(count()) AS n FROM ${db()}.${table} WHERE org_id = '${orgId}'`);
    expect([await dims('flows_dims_5m'), await dims('flows_dims_1h')]).toEqual([[{ n: '0' }], [{ n: '0' }]]);

    expect(await sums(orgId)).toEqual(allLike(`300 flows, ${bytes} bytes`));
  });

  test('a second repair of the same write changes nothing', async () => {
    const orgId = `org_twice_${randomBytes(3).toString('hex')}`;
    const { bytes } = flowRows(orgId);
    const writeId = await writeCut(orgId, ['flows_src_1m']);
    await store.completeRollups([writeId]);

    expect(await store.completeRollups([writeId])).toEqual([]);
    expect(await sums(orgId)).toEqual(allLike(`300 flows, ${bytes} bytes`));
  });

  test('a write every rollup holds is left as it is', async () => {
    const orgId = `org_whole_${randomBytes(3).toString('hex')}`;
    const { bytes } = flowRows(orgId);
    const writeId = await writeCut(orgId, []);

    expect(await store.completeRollups([writeId])).toEqual([]);
    expect(await sums(orgId)).toEqual(allLike(`300 flows, ${bytes} bytes`));
  });

  test('receipts stay out of every workspace: the rollups of a workspace hold its flows alone', async () => {
    const orgId = `org_receipts_${randomBytes(3).toString('hex')}`;
    const writeId = await writeCut(orgId, []);
    for (const r of viewFedRollups) {
      const [receipt] = await query<{ org: string; n: string }>(`SELECT any(org_id) AS org, sum(flows) AS n FROM ${db()}.${r.table} WHERE write_id = ${writeId}`);
      expect({ table: r.table, org: receipt!.org, flows: Number(receipt!.n) }).toEqual({ table: r.table, org: '', flows: 300 });
    }
  });

  test('a flow row cannot choose the write id it is stored under', async () => {
    const orgId = `org_forged_${randomBytes(3).toString('hex')}`;
    const row = flowRows(orgId).ndjson.split('\n')[0]!.replace('{"org_id"', '{"write\\u005fid":123,"org_id"');
    // 18.16 refuses a row naming a field twice; current ClickHouse keeps the first, which the storage writes.
    const refused = await store.insert('flows', `${row}\n`).then(() => false, () => true);
    const stored = await query<{ w: string }>(`SELECT toString(write_id) AS w FROM ${db()}.flows WHERE org_id = '${orgId}'`);
    expect(refused ? stored : stored.filter((r) => r.w === '123')).toEqual([]);
  });
});
