import { createRegistry } from '../../observability/metrics';
import { createLogger } from '../../observability/logger';
import { RetentionJob } from '../../workers/retention';
import { startTestStack, transports, type TestStack } from '../support/test-stack';

describe.each(transports)('retention on %s', (transport) => {
  let t: TestStack;
  beforeAll(async () => {
    t = await startTestStack(transport, { ROLES: 'api' });
  });
  afterAll(async () => {
    await t.stop();
  });

  test('a run drops the daily partitions past the retention and keeps the recent ones', async () => {
    const ch = t.stack.clickhouse;
    const now = Date.now();
    const row = (ts: number, id: string) =>
      JSON.stringify({ org_id: 'org_r', ts, received_at: ts, event_id: id, src_ip: '1.1.1.1', dst_ip: '2.2.2.2', src_port: 0, dst_port: 0, protocol: 'tcp', bytes: 1, packets: 1 });
    await ch.insertJsonEachRow('flows', [row(now - 40 * 86_400_000, 'evt_old'), row(now, 'evt_new')].join('\n') + '\n');
    const job = new RetentionJob({ retentionDays: 30, intervalMs: 3_600_000 }, { clickhouse: ch, log: createLogger('silent'), registry: createRegistry() });
    const dropped = await job.runOnce();
    expect(dropped.map((d) => d.table)).toEqual(expect.arrayContaining(['flows', 'flows_1m']));
    const left = await ch.query<{ event_id: string }>(`SELECT event_id FROM ${ch.database}.flows WHERE org_id = 'org_r'`);
    expect(left.map((r) => r.event_id)).toEqual(['evt_new']);
  });
});
