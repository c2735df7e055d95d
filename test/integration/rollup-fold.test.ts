import { randomBytes } from 'node:crypto';
import { flowRowJson, parseFlow } from '../../core/flow';
import { recordEventId } from '../../core/ids';
import { foldedRollups } from '../../storage/migrations/folded-rollups';
import { defaultRollupFoldConfig, pendingBuckets, RollupFold } from '../../storage/rollup-fold';
import { topFlows } from '../../storage/flow-analytics';
import { TelemetryStore } from '../../storage/telemetry-store';
import { startTestStack, transports, type TestStack } from '../support/test-stack';

/**
 * The 5-minute and hourly flow rollups are folded from the minute level
 * (storage/rollup-fold.ts): an insert marks its buckets pending, a fold adds
 * what the coarse levels lack, exactly once whatever is folded again, on
 * both generations.
 */
const minute = 60_000;
const hour = 60 * minute;

describe.each(transports)('the folded rollups on %s', (transport) => {
  let t: TestStack;
  let store: TelemetryStore;
  let fold: RollupFold;
  beforeAll(async () => {
    t = await startTestStack(transport, { ROLES: 'api' });
    store = new TelemetryStore(t.stack.clickhouse);
    fold = new RollupFold(t.stack.clickhouse);
  });
  afterAll(async () => {
    await t.stop();
  });

  const ch = () => t.stack.clickhouse;
  /** An hour boundary three hours ago: every bucket of the test is closed. */
  const base = Math.floor(Date.now() / hour) * hour - 3 * hour;
  const newOrg = (name: string) => `org_${name}_${randomBytes(3).toString('hex')}`;

  /** Writes one flow of `bytes` to 192.0.2.<host> for each time, as the stream workers write flows. */
  async function write(orgId: string, times: number[], bytes = 1000, host = 1): Promise<void> {
    const hex = randomBytes(7).toString('hex');
    const rows = times.map((ts, i) => {
      const flow = parseFlow({ src_ip: '198.51.100.7', dst_ip: `192.0.2.${host}`, src_port: 443, dst_port: 5000 + i, protocol: 'tcp', bytes, packets: 2 }).data!;
      return flowRowJson(flow, { org_id: orgId, event_id: recordEventId(hex, i), ts, received_at: ts }).json;
    });
    await store.insert('flows', rows.join('\n') + '\n');
  }

  /** Each folded rollup's flows and bytes for the workspace, and the minute level's. */
  async function sums(orgId: string): Promise<Record<string, string>> {
    const out: Record<string, string> = {};
    for (const table of ['flows_1m', ...foldedRollups.map((r) => r.table)]) {
      const [row] = await ch().query<{ f: string; b: string }>(`SELECT sum(flows) AS f, sum(bytes) AS b FROM ${ch().database}.${table} WHERE org_id = '${orgId}'`);
      out[table] = `${row!.f} flows, ${row!.b} bytes`;
    }
    return out;
  }
  const everyLevel = (value: string) => Object.fromEntries(['flows_1m', ...foldedRollups.map((r) => r.table)].map((table) => [table, value]));

  test('an insert marks the 5-minute buckets it touched pending, and nothing is in the coarse levels before a fold', async () => {
    const orgId = newOrg('marks');
    await write(orgId, [base + 1_000, base + 7 * minute, base + hour + 30 * minute]);

    expect([...(await pendingBuckets(ch(), orgId, base, base + 2 * hour))].sort()).toEqual([base, base + 5 * minute, base + hour + 30 * minute]);
    expect((await sums(orgId))['flows_5m']).toBe('0 flows, 0 bytes');
  });

  test('a fold brings the 5-minute and hourly levels to the minute sums and leaves no bucket pending', async () => {
    const orgId = newOrg('fold');
    await write(orgId, [base + 1_000, base + 7 * minute, base + hour + 30 * minute]);

    await fold.foldAll();

    expect(await sums(orgId)).toEqual(everyLevel('3 flows, 3000 bytes'));
    expect(await pendingBuckets(ch(), orgId, base, base + 2 * hour)).toEqual(new Set());
  });

  test('a late row in a folded bucket makes it pending again, and the next fold adds that row alone', async () => {
    const orgId = newOrg('late');
    await write(orgId, [base + 2 * minute]);
    await fold.foldAll();

    await write(orgId, [base + 3 * minute], 500);
    expect(await pendingBuckets(ch(), orgId, base, base + hour)).toEqual(new Set([base]));
    await fold.foldAll();

    expect(await sums(orgId)).toEqual(everyLevel('2 flows, 1500 bytes'));
  });

  test('a round that rests folded buckets folds a new bucket but leaves a late row\'s bucket pending; a fold without the rest adds the row', async () => {
    const orgId = newOrg('rested');
    await write(orgId, [base + 32 * minute]);
    await fold.foldAll();
    await write(orgId, [base + 33 * minute, base + 52 * minute], 500);
    // Marks of the fold's own second stay pending (a tie): the fold reads the time a second after the write.
    await new Promise((resolve) => setTimeout(resolve, 1_100));

    const rested = await fold.foldOnce({ refoldAfterMs: 10 * minute });
    expect(rested.filter((b) => b.orgId === orgId)).toEqual([{ orgId, bucket: base + 50 * minute }]);
    expect(await pendingBuckets(ch(), orgId, base, base + hour)).toEqual(new Set([base + 30 * minute]));
    expect((await sums(orgId))['flows_5m']).toBe('2 flows, 1500 bytes');

    await fold.foldAll();
    expect(await sums(orgId)).toEqual(everyLevel('3 flows, 2000 bytes'));
  });

  test('a bucket folded again (a fold whose marks were lost) gains nothing twice', async () => {
    const orgId = newOrg('again');
    await write(orgId, [base + 20 * minute, base + 21 * minute]);
    await fold.foldAll();

    // As if the fold's marks had not been written: the bucket is pending again with nothing new in it.
    await ch().exec(`INSERT INTO ${ch().database}.rollup_marks (org_id, bucket, kind, at) SELECT '${orgId}', ${ch().dialect.bucketLiteral(base + 20 * minute)}, 'pending', ${ch().dialect.nowTime}`);
    await fold.foldAll();

    expect(await sums(orgId)).toEqual(everyLevel('2 flows, 2000 bytes'));
  });

  test('a bucket that has not closed for the fold\'s wait stays pending', async () => {
    const orgId = newOrg('open');
    const now = Date.now();
    await write(orgId, [now]);

    await fold.foldAll();

    expect(await pendingBuckets(ch(), orgId, now - hour, now + minute)).toEqual(new Set([Math.floor(now / (5 * minute)) * 5 * minute]));
  });

  test('a top-N over buckets not yet folded is exact, read from the minutes, and from the coarse levels once folded', async () => {
    const orgId = newOrg('planned');
    await write(orgId, [base + 1_000, base + 12 * minute, base + hour + 5 * minute], 250);
    const scope = { orgId, range: { from: base, to: base + 2 * hour }, filters: [], plan: { source: 'dst' as const } };

    const before = await topFlows(ch(), scope, ['dst_ip'], 'bytes', 10);
    await fold.foldAll();
    const after = await topFlows(ch(), scope, ['dst_ip'], 'bytes', 10);

    expect(before.rows.map((r) => r.bytes)).toEqual([750]);
    expect(before.segments.map((s) => s.resolution)).toEqual(['1m', '5m', '1m', '5m', '1m', '5m']);
    expect(after.rows.map((r) => r.bytes)).toEqual([750]);
    expect(after.segments.map((s) => s.resolution)).toEqual(['1h']);
  });

  test('one workspace\'s fold leaves another\'s rows where they are', async () => {
    const a = newOrg('a');
    const b = newOrg('b');
    await write(a, [base + 40 * minute], 100, 1);
    await write(b, [base + 40 * minute], 7, 1);

    await new RollupFold(ch(), { ...defaultRollupFoldConfig, maxBuckets: 1 }).foldAll();

    expect(await sums(a)).toEqual(everyLevel('1 flows, 100 bytes'));
    expect(await sums(b)).toEqual(everyLevel('1 flows, 7 bytes'));
  });
});
