import { createRegistry } from '../../observability/metrics';
import { createLogger } from '../../observability/logger';
import { applyRetentionTtl } from '../../storage/retention';
import { RetentionJob } from '../../storage/retention-job';
import { startTestStack, transports, type TestStack } from '../support/test-stack';
import { waitForMutations } from '../support/wait';

const retention = { raw: 30, minute: 30, fiveMinutes: 90, hour: 400 };

describe.each(transports)('retention on %s', (transport) => {
  let t: TestStack;
  beforeAll(async () => {
    t = await startTestStack(transport, { ROLES: 'api' });
  });
  afterAll(async () => {
    await t.stop();
  });

  async function insertOldAndNewFlow(orgId: string) {
    const ch = t.stack.clickhouse;
    const now = Date.now();
    const row = (ts: number, id: string) =>
      JSON.stringify({ org_id: orgId, ts, received_at: ts, event_id: id, src_ip: '1.1.1.1', dst_ip: '2.2.2.2', src_port: 0, dst_port: 0, protocol: 'tcp', bytes: 1, packets: 1 });
    await ch.insertJsonEachRow('flows', [row(now - 40 * 86_400_000, 'evt_old'), row(now, 'evt_new')].join('\n') + '\n');
  }

  const eventIds = async (orgId: string) => {
    const ch = t.stack.clickhouse;
    return (await ch.query<{ event_id: string }>(`SELECT event_id FROM ${ch.database}.flows WHERE org_id = '${orgId}'`)).map((r) => r.event_id);
  };

  test('rows past the retention are removed and recent ones kept', async () => {
    const ch = t.stack.clickhouse;
    await insertOldAndNewFlow('org_r');
    if (ch.dialect.generation === 'legacy') {
      // 18.16 has no TTL: the retention job drops whole daily partitions.
      const job = new RetentionJob({ retention, intervalMs: 3_600_000 }, { clickhouse: ch, log: createLogger('silent'), registry: createRegistry() });
      const dropped = await job.runOnce();
      expect(dropped.map((d) => d.table)).toEqual(expect.arrayContaining(['flows', 'flows_1m']));
    } else {
      // Current ClickHouse expires rows by the tables' TTL, applied when parts merge.
      await ch.exec(`OPTIMIZE TABLE ${ch.database}.flows FINAL`);
    }
    expect(await eventIds('org_r')).toEqual(['evt_new']);
  });

  test('counts of unknown exporters past the retention are removed and recent ones kept', async () => {
    const ch = t.stack.clickhouse;
    const minute = (daysAgo: number) => Math.floor((Date.now() - daysAgo * 86_400_000) / 60_000) * 60_000;
    const row = (address: string, daysAgo: number) => JSON.stringify({ address, minute: minute(daysAgo), datagrams: 1, flows: 1 });
    await ch.insertJsonEachRow('unknown_exporters', [row('192.0.2.250', 40), row('192.0.2.251', 0)].join('\n') + '\n');
    if (ch.dialect.generation === 'legacy') {
      // The table has no daily partitions: its expired rows go by a mutation.
      const job = new RetentionJob({ retention, intervalMs: 3_600_000 }, { clickhouse: ch, log: createLogger('silent'), registry: createRegistry() });
      expect((await job.runOnce()).filter((d) => d.table === 'unknown_exporters')).toEqual([{ table: 'unknown_exporters', partition: 'rows' }]);
      await waitForMutations(ch, 'unknown_exporters');
    } else {
      await ch.exec(`OPTIMIZE TABLE ${ch.database}.unknown_exporters FINAL`);
    }
    const left = await ch.query<{ address: string }>(`SELECT address FROM ${ch.database}.unknown_exporters WHERE address LIKE '192.0.2.25%' ORDER BY address`);
    expect(left.map((r) => r.address)).toEqual(['192.0.2.251']);
  });

  test("the rate detectors' attack details past the hourly rollups' retention are removed and recent ones kept", async () => {
    const ch = t.stack.clickhouse;
    const row = (eventId: string, daysAgo: number) =>
      JSON.stringify({ org_id: 'org_aw', event_id: eventId, scope: 'host', target: '192.0.2.9', host_group: '', window_end: Date.now() - daysAgo * 86_400_000, type: 'syn_flood', vector: '', detector_version: 1, rules_version: 1, rates: '{}', details: '{}', created_at: Date.now() });
    await ch.insertJsonEachRow('attack_windows', [row('sig_old', retention.hour + 10), row('sig_new', 1)].join('\n') + '\n');
    if (ch.dialect.generation === 'legacy') {
      const job = new RetentionJob({ retention, intervalMs: 3_600_000 }, { clickhouse: ch, log: createLogger('silent'), registry: createRegistry() });
      expect((await job.runOnce()).filter((d) => d.table === 'attack_windows')).toEqual([{ table: 'attack_windows', partition: 'rows' }]);
      await waitForMutations(ch, 'attack_windows');
    } else {
      await applyRetentionTtl(ch, retention);
      await ch.exec(`OPTIMIZE TABLE ${ch.database}.attack_windows FINAL`);
    }
    const left = await ch.query<{ event_id: string }>(`SELECT event_id FROM ${ch.database}.attack_windows WHERE org_id = 'org_aw'`);
    expect(left.map((r) => r.event_id)).toEqual(['sig_new']);
  });
});

describe('retention on current ClickHouse (chDB)', () => {
  let t: TestStack;
  beforeAll(async () => {
    t = await startTestStack('chdb', { ROLES: 'api' });
  });
  afterAll(async () => {
    await t.stop();
  });

  test('the retention job leaves expiry to the tables\' TTL, each rollup with its own', async () => {
    const ch = t.stack.clickhouse;
    const job = new RetentionJob({ retention, intervalMs: 3_600_000 }, { clickhouse: ch, log: createLogger('silent'), registry: createRegistry() });
    expect(await job.runOnce()).toEqual([]);
    const tables = await ch.query<{ name: string; engine_full: string }>(
      `SELECT name, engine_full FROM system.tables WHERE database = '${ch.database}' AND name IN ('flows', 'flows_1m', 'flows_5m', 'flows_1h', 'flows_src_1h', 'flows_dims_1h')`,
    );
    const ttlDays = Object.fromEntries(tables.map((r) => [r.name, /TTL .*?(?:INTERVAL (\d+) DAY|toIntervalDay\((\d+)\))/.exec(r.engine_full)?.slice(1).find(Boolean)]));
    expect(ttlDays).toEqual({
      flows: '30', flows_1m: '30', flows_5m: '90', flows_1h: '400', flows_src_1h: '400', flows_dims_1h: '400',
    });
  });

  test('a changed retention setting reaches the existing tables at the next start, and an unchanged one alters nothing', async () => {
    const ch = t.stack.clickhouse;
    expect(await applyRetentionTtl(ch, retention)).toEqual([]);
    expect(await applyRetentionTtl(ch, { ...retention, fiveMinutes: 120 })).toEqual(['flows_5m', 'flows_src_5m', 'flows_dims_5m', 'metrics_5m']);
    const rows = await ch.query<{ engine_full: string }>(`SELECT engine_full FROM system.tables WHERE database = '${ch.database}' AND name = 'flows_5m'`);
    expect(rows[0]?.engine_full).toMatch(/toIntervalDay\(120\)|INTERVAL 120 DAY/);
    expect(await applyRetentionTtl(ch, { ...retention, fiveMinutes: 120 })).toEqual([]);
  });
});
