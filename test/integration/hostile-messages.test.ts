import { headers as natsHeaders } from 'nats';
import { metricTotal } from '../support/metrics';
import { UnsafeInsertError } from '../../storage/clickhouse';
import { telemetryHeaderNames } from '../../core/telemetry-headers';
import { startTestStack, type TestStack } from '../support/test-stack';
import { waitFor } from '../support/wait';
import { orgIs, storedCount } from '../support/stored-count';
import { names } from '../../streams/names';

/**
 * Whoever can publish on the telemetry subjects is not trusted. chDB 3.4.0
 * runs whatever follows a blank line of an in-memory insert as SQL; a
 * message carrying such a payload, or rows of another workspace, must go to
 * the dead-letter stream without any of its bytes reaching the engine.
 */
describe('hostile messages on the telemetry subjects', () => {
  let t: TestStack;
  beforeAll(async () => {
    t = await startTestStack('chdb');
  });
  afterAll(() => t.stop());

  const tableExists = async (name: string) => {
    const ch = t.stack.clickhouse;
    const rows = await ch.query<{ n: string }>(`SELECT count() AS n FROM system.tables WHERE database = '${ch.database}' AND name = '${name}'`);
    return Number(rows[0]!.n) > 0;
  };

  async function publish(org: string, body: string, kind = 'flow'): Promise<void> {
    const h = natsHeaders();
    h.set(telemetryHeaderNames.kind, kind);
    h.set(telemetryHeaderNames.org, org);
    h.set(telemetryHeaderNames.minTs, String(Date.now()));
    h.set(telemetryHeaderNames.maxTs, String(Date.now()));
    await t.stack.nats.js().publish(names(t.stack.config.nats.prefix).subject(kind as 'flow', org), Buffer.from(body), { headers: h });
  }

  const deadLetters = async () => (await t.stack.nats.jsm.streams.info(names(t.stack.config.nats.prefix).deadLetter)).state.messages;

  test('a published payload with SQL after a blank line runs nothing and is dead-lettered and counted', async () => {
    const minted = await t.mintKey({ role: 'operator' });
    const before = await deadLetters();
    const sql = `CREATE TABLE ${t.stack.clickhouse.database}.pwned (x Int8) ENGINE = Memory`;
    await publish(minted.org_id, `{"org_id":"${minted.org_id}","event_id":"evt_x","ts":${Date.now()}}\n\n${sql}\n`);
    await waitFor(async () => ((await deadLetters()) > before ? true : undefined), 30_000, 'the message in the dead-letter stream');
    expect(await tableExists('pwned')).toBe(false);
    expect(await metricTotal(t.stack.registry, 'nettel_worker_messages_refused_total')).toBeGreaterThanOrEqual(1);
  });

  test('rows of another workspace published on a workspace subject are dead-lettered, and the other workspace holds nothing', async () => {
    const [attacker, victim] = [await t.mintKey({ role: 'operator' }), await t.mintKey({ role: 'operator' })];
    const before = await deadLetters();
    const row = { org_id: victim.org_id, event_id: 'evt_forged', ts: Date.now(), received_at: Date.now(), src_ip: '10.0.0.1', dst_ip: '10.0.0.2', src_port: 1, dst_port: 2, protocol: 'udp', bytes: 1, packets: 1 };
    await publish(attacker.org_id, JSON.stringify(row) + '\n');
    await waitFor(async () => ((await deadLetters()) > before ? true : undefined), 30_000, 'the message in the dead-letter stream');
    expect(await storedCount(t.stack.clickhouse, 'flows', orgIs(victim.org_id))).toBe(0);
  });

  test('a line of the workspace carrying a second object of another workspace is dead-lettered, and the other workspace holds nothing', async () => {
    const [attacker, victim] = [await t.mintKey({ role: 'operator' }), await t.mintKey({ role: 'operator' })];
    const row = (org: string, id: string) => JSON.stringify({ org_id: org, event_id: id, ts: Date.now(), received_at: Date.now(), src_ip: '10.0.0.1', dst_ip: '10.0.0.2', src_port: 1, dst_port: 2, protocol: 'udp', bytes: 1, packets: 1 });
    const before = await deadLetters();
    // ClickHouse's JSONEachRow reads each of these lines as two rows: the screen must parse where the first object ends.
    for (const [i, between] of ['', ',', ' '].entries()) await publish(attacker.org_id, `${row(attacker.org_id, `evt_a${i}`)}${between}${row(victim.org_id, `evt_b${i}`)}\n`);
    await waitFor(async () => ((await deadLetters()) >= before + 3 ? true : undefined), 30_000, 'the three messages in the dead-letter stream');
    expect(await storedCount(t.stack.clickhouse, 'flows', orgIs(victim.org_id))).toBe(0);
    expect(await storedCount(t.stack.clickhouse, 'flows', orgIs(attacker.org_id))).toBe(0);
  });

  test("chDB's in-memory insert refuses a payload with a blank line before the engine sees it", async () => {
    const ch = t.stack.clickhouse;
    const sql = `CREATE TABLE ${ch.database}.pwned_direct (x Int8) ENGINE = Memory`;
    await expect(ch.insertJsonEachRow('flows', `{"org_id":"o"}\n\n${sql}\n`)).rejects.toBeInstanceOf(UnsafeInsertError);
    expect(await tableExists('pwned_direct')).toBe(false);
  });
});
