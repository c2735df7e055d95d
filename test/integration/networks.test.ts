import type { AuditEntryView, ErrorBody, Page } from '../support/api-types';
import { startTestStack, transports, type TestStack } from '../support/test-stack';
import { waitFor, waitForTelemetryDrained } from '../support/wait';

/**
 * A workspace's own networks (docs/enrichment.md): a versioned, audited
 * document whose prefixes label the flows stored after a change, the most
 * specific prefix winning, as dimensions analysts filter and group by. One
 * workspace's networks never label another's flows.
 */
interface NetworksView {
  version: number;
  networks: Array<Record<string, unknown>>;
  updated_at: string | null;
  updated_by: string | null;
}
type FlowView = Record<string, string | number | null>;

describe.each(transports)("a workspace's networks on %s", (transport) => {
  let t: TestStack;
  beforeAll(async () => {
    t = await startTestStack(transport, { ROLES: 'api,stream-workers', WORKER_MAX_WAIT_MS: '20' });
  });
  afterAll(async () => {
    await t?.stop();
  });

  const put = (key: string, body: unknown) => t.request<NetworksView & ErrorBody>('PUT', '/v1/networks', { key, body });
  const flowsOf = async (key: string, query = '') => (await t.request<{ data: FlowView[] }>('GET', `/v1/telemetry/flows?limit=100${query}`, { key })).body.data;
  const post = async (key: string, flows: unknown[]) => {
    expect((await t.request('POST', '/flow', { key, body: flows })).status).toBe(201);
    await waitForTelemetryDrained(t.stack.nats.jsm, t.stack.config.nats.prefix, 20_000);
  };

  test('a workspace reads no networks as version 0, sets the next version (audited), and reads any version back', async () => {
    const { key } = await t.mintKey({ role: 'operator' });
    expect((await t.request<NetworksView>('GET', '/v1/networks', { key })).body).toEqual({ version: 0, networks: [], updated_at: null, updated_by: null });
    const doc = { networks: [{ prefix: '10.0.0.0/8', name: 'corp' }] };
    const first = await put(key, doc);
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ version: 1, networks: [{ prefix: '10.0.0.0/8', name: 'corp', role: '', site: '', tenant: '', tags: [] }] });
    expect((await put(key, doc)).body.version).toBe(1);
    expect((await put(key, { version: 0, networks: [] })).status).toBe(409);
    expect((await put(key, { version: 1, networks: [] })).body.version).toBe(2);
    expect((await t.request<NetworksView>('GET', '/v1/networks/versions/1', { key })).body.networks).toHaveLength(1);
    const audit = await t.request<Page<AuditEntryView>>('GET', '/v1/audit', { key });
    expect(audit.body.data.filter((e) => e.action === 'networks.update').map((e) => e.target).sort()).toEqual(['v1', 'v2']);
  });

  test('bad networks are 400 naming the field: not a prefix, a label with a quote, the same prefix twice', async () => {
    const { key, org_id } = await t.mintKey({ role: 'operator' });
    for (const [networks, path] of [
      [[{ prefix: '10.0.0.1', name: 'a' }], 'networks.0.prefix'],
      [[{ prefix: '10.0.0.0/33', name: 'a' }], 'networks.0.prefix'],
      [[{ prefix: '10.0.0.0/8', name: "a' OR 1=1" }], 'networks.0.name'],
      [[{ prefix: '10.0.0.0/8', name: 'a' }, { prefix: '10.1.2.3/8', name: 'b' }], 'networks.1.prefix'],
    ] as const) {
      const res = await put(key, { networks });
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe('VALIDATION_ERROR');
      expect(JSON.stringify(res.body.error)).toContain(path);
    }
    const analyst = await t.mintKey({ role: 'analyst', orgId: org_id });
    expect((await put(analyst.key, { networks: [] })).status).toBe(403);
  });

  test('the most specific network labels a flow, as dimensions analysts filter and group by; another workspace is not labelled', async () => {
    const a = await t.mintKey({ role: 'operator' });
    const b = await t.mintKey({ role: 'operator' });
    const res = await put(a.key, {
      networks: [
        { prefix: '10.0.0.0/8', name: 'corp', role: 'internal' },
        { prefix: '10.1.0.0/16', name: 'dc1', role: 'servers', site: 'par1', tenant: 'acme', tags: ['prod'] },
        { prefix: '2001:db8::/32', name: 'v6-lab', site: 'ams1' },
      ],
    });
    expect(res.status).toBe(200);
    const flows = [
      { src_ip: '10.2.0.1', dst_ip: '10.1.2.3', bytes: 100, packets: 1, protocol: 'tcp' },
      { src_ip: '2001:db8::1', dst_ip: '192.0.2.1', bytes: 50, packets: 1, protocol: 'udp' },
    ];
    await post(a.key, flows);
    await post(b.key, flows);
    const mine = await waitFor(async () => ((await flowsOf(a.key)).length === 2 ? flowsOf(a.key) : undefined), 20_000, 'both flows of a');
    expect(mine.find((f) => f.src_ip === '10.2.0.1')).toMatchObject({ src_net_name: 'corp', src_net_role: 'internal', dst_net_name: 'dc1', dst_net_site: 'par1', dst_net_tenant: 'acme' });
    expect(mine.find((f) => f.src_ip === '2001:db8::1')).toMatchObject({ src_net_name: 'v6-lab', src_net_site: 'ams1', dst_net_name: null });
    const theirs = await waitFor(async () => ((await flowsOf(b.key)).length === 2 ? flowsOf(b.key) : undefined), 20_000, 'both flows of b');
    expect(theirs.every((f) => f.src_net_name === null && f.dst_net_name === null)).toBe(true);

    const top = await t.request<{ data: FlowView[] }>('GET', '/v1/telemetry/flows/top?by=dst_net_name,dst_net_site&metric=bytes', { key: a.key });
    expect(top.status).toBe(200);
    expect(top.body.data).toEqual([
      expect.objectContaining({ dst_net_name: 'dc1', dst_net_site: 'par1', bytes: 100 }),
      expect.objectContaining({ dst_net_name: null, dst_net_site: null, bytes: 50 }),
    ]);
    expect((await flowsOf(a.key, '&src_net_site=ams1')).map((f) => f.src_ip)).toEqual(['2001:db8::1']);
    const series = await t.request<{ series: Array<{ key: unknown }> }>('GET', '/v1/telemetry/flows/series?split_by=src_net_name', { key: a.key });
    expect(series.status).toBe(200);
    expect(series.body.series.map((s) => s.key)).toEqual(expect.arrayContaining([{ src_net_name: 'corp' }, { src_net_name: 'v6-lab' }]));
  });
});
