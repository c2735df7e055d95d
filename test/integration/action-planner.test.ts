import { planActions } from '../../workers/governance/activities/action-planner';
import type { ActionSpec, PlannedAction } from '../../core/automation-plan';
import type { ClickHouse } from '../../storage/clickhouse';
import { orgIs, waitForStoredCount } from '../support/stored-count';
import { startTestStack, transports, type TestStack } from '../support/test-stack';

/**
 * A run's actions as the planner makes them from the stored flows, on both
 * generations: what a preview counts of a rule on TCP flags and packet
 * length, and the rule a fingerprint action becomes, or its refusal.
 */
describe.each(transports)('the action planner on %s', (transport) => {
  let t: TestStack;
  beforeAll(async () => {
    t = await startTestStack(transport, { ROLES: 'api,stream-workers' });
  });
  afterAll(() => t.stop());

  /** Every statement the planners of the test send, as a replay's planning sends them. */
  const statements: string[] = [];

  /** A workspace with these flows stored (times in minutes before now), and a planner over them. */
  async function workspaceWith(flows: Array<Record<string, unknown> & { minutesAgo: number }>) {
    const key = await t.mintKey({ role: 'operator' });
    const now = Date.now();
    const body = flows.map(({ minutesAgo, ...f }) => ({ src_port: 40_000, protocol: 'tcp', ...f, timestamp: now - minutesAgo * 60_000 }));
    expect((await t.request('POST', '/flow', { key: key.key, body })).status).toBe(201);
    await waitForStoredCount(t.stack.clickhouse, 'flows', flows.length, { where: orgIs(key.org_id), what: 'the flows stored' });
    const ch = t.stack.clickhouse;
    const counted: ClickHouse = Object.assign(Object.create(ch) as ClickHouse, { query: <T,>(sql: string) => (statements.push(sql), ch.query<T>(sql)) });
    const deps = { clickhouse: counted, blackholeNextHop: t.stack.config.bgp.blackholeNextHop, operatorBounds: t.stack.config.bgp.allowed };
    return (spec: ActionSpec, address: string): Promise<PlannedAction[] | string> =>
      planActions(deps, 'run', { id: 'inc', org_id: key.org_id, service: address }, [spec], { from: now - 5 * 60_000, to: now }, { preview: true });
  }

  test('a preview on TCP flags and packet length counts the one-packet flows that match, exactly, and says it is exact', async () => {
    const to = '198.51.100.7';
    // A 60-byte SYN matches; a 1,500-byte SYN is outside the length, a 60-byte ACK has no SYN.
    const plan = await workspaceWith([
      { src_ip: '192.0.2.1', dst_ip: to, dst_port: 80, bytes: 60, packets: 1, tcp_flags: 0x02, minutesAgo: 0.5 },
      { src_ip: '192.0.2.1', dst_ip: to, dst_port: 80, bytes: 1_500, packets: 1, tcp_flags: 0x02, minutesAgo: 0.5 },
      { src_ip: '192.0.2.1', dst_ip: to, dst_port: 80, bytes: 60, packets: 1, tcp_flags: 0x10, minutesAgo: 0.5 },
    ]);
    const planned = await plan({ type: 'flowspec_discard', duration_minutes: 10, tcp_flags: ['syn'], packet_length: { min: 40, max: 80 } }, to);
    if (typeof planned === 'string') throw new Error(planned);
    expect(planned[0]!.preview).toMatchObject({ approximate: false, share: 60 / 1_620, matched_bits_per_second: Math.round((60 * 8) / 300) });
  });

  test('a preview that matched a flow of many packets on its TCP flags says it is approximate', async () => {
    const to = '198.51.100.8';
    const plan = await workspaceWith([{ src_ip: '192.0.2.1', dst_ip: to, dst_port: 80, bytes: 6_000, packets: 100, tcp_flags: 0x12, minutesAgo: 0.5 }]);
    const planned = await plan({ type: 'flowspec_discard', duration_minutes: 10, tcp_flags: ['syn'] }, to);
    expect(typeof planned === 'string' ? planned : planned[0]!.preview).toMatchObject({ approximate: true, share: 1 });
  });

  test("a fingerprint action becomes the Flowspec discard of the attack's narrowest match, which leaves the destination's normal traffic alone", async () => {
    const to = '198.51.100.9';
    const plan = await workspaceWith([
      ...Array.from({ length: 10 }, (_, i) => ({ src_ip: `192.0.2.${i + 1}`, dst_ip: to, dst_port: 443, bytes: 100_000, packets: 100, tcp_flags: 0x18, minutesAgo: 20 })),
      ...Array.from({ length: 40 }, (_, i) => ({ src_ip: `203.0.113.${i + 1}`, src_port: 40_000 + i, dst_ip: to, dst_port: 80, bytes: 60, packets: 1, tcp_flags: 0x02, minutesAgo: 0.5 })),
    ]);
    const planned = await plan({ type: 'flowspec_fingerprint', duration_minutes: 15, attack_share: 0.9, baseline_share: 0.1 }, to);
    if (typeof planned === 'string') throw new Error(planned);
    expect(planned[0]).toMatchObject({
      type: 'flowspec_discard',
      duration_minutes: 15,
      fingerprint: { attack_share: 1, baseline_share: 0 },
      mitigation: { action: 'flowspec_discard', match: { destination: `${to}/32`, protocols: [6], destinationPorts: [80], tcpFlags: ['syn'], packetLength: { min: 60, max: 60 } } },
      preview: { share: 1, approximate: false },
    });
  });

  test("a replay's planning on its window reads the stored flows in two statements for the fingerprint (the attack and its baseline) and two for each action's preview", async () => {
    const to = '198.51.100.13';
    const plan = await workspaceWith(Array.from({ length: 20 }, (_, i) => ({ src_ip: `203.0.113.${i + 1}`, src_port: 40_000 + i, dst_ip: to, dst_port: 80, bytes: 60, packets: 1, tcp_flags: 0x02, minutesAgo: 0.5 })));
    statements.splice(0);
    const planned = await plan({ type: 'flowspec_fingerprint', duration_minutes: 15 }, to);
    if (typeof planned === 'string') throw new Error(planned);
    expect(planned[0]!.preview).toMatchObject({ share: 1 });
    const shapes = statements.filter((sql) => sql.includes('GROUP BY protocol, sp, dp, f, size')).length;
    expect({ shapes, previews: statements.filter((sql) => /\.flows\s+WHERE/.test(sql)).length - shapes }).toEqual({ shapes: 2, previews: 2 });
  });

  test("a fingerprint that would cover more of the destination's normal traffic than its action allows is refused, naming both shares", async () => {
    const to = '198.51.100.10';
    const syn = (i: number, minutesAgo: number) => ({ src_ip: `203.0.113.${i + 1}`, src_port: 40_000 + i, dst_ip: to, dst_port: 80, bytes: 60, packets: 1, tcp_flags: 0x02, minutesAgo });
    // The normal traffic looks like the attack: the narrowest rule still matches all of it.
    const plan = await workspaceWith([...Array.from({ length: 20 }, (_, i) => syn(i, 20)), ...Array.from({ length: 20 }, (_, i) => syn(i, 0.5))]);
    expect(await plan({ type: 'flowspec_fingerprint', duration_minutes: 15, attack_share: 0.9, baseline_share: 0.05 }, to)).toMatch(
      /fingerprint on 198\.51\.100\.10 covers 100 % of its packets and 100 % of the destination's normal traffic: outside the action's bounds/,
    );
  });

  test('a fingerprint action on a destination with no stored flows is refused, saying so', async () => {
    const plan = await workspaceWith([{ src_ip: '192.0.2.1', dst_ip: '198.51.100.11', dst_port: 80, bytes: 60, packets: 1, minutesAgo: 0.5 }]);
    expect(await plan({ type: 'flowspec_fingerprint', duration_minutes: 15 }, '198.51.100.12')).toBe('no stored flows towards 198.51.100.12 to fingerprint the attack on');
  });
});
