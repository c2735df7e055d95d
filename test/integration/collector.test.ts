import { randomBytes } from 'node:crypto';
import { metricTotal } from '../support/metrics';
import type { DataOf, ExporterView, HealthView, UnknownExporterView } from '../support/api-types';
import { registerExporter, startCollectorStack, storedFlowSums, waitForStoredFlows } from '../support/collector';
import { netflowV5, netflowV9Templates, netflowV9UnknownTemplate, type V5Record } from '../support/netflow-v5';
import type { TestStack } from '../support/test-stack';
import { sendDatagrams } from '../support/udp';
import { waitFor } from '../support/wait';
import { storedCount } from '../support/stored-count';

/**
 * The collector on its own terms: routing by exporter address, the sampling
 * rule, isolation, unknown exporters, bad input and a GoFlow2 crash, driven
 * by hand-made NetFlow v5 datagrams from distinct loopback addresses
 * (test/integration/flow-exporters.test.ts drives real exporters).
 */
const record = (over: Partial<V5Record> = {}): V5Record => ({ src: '10.1.0.1', dst: '10.2.0.1', bytes: 1000, packets: 10, protocol: 6, srcPort: 40000, dstPort: 443, ...over });

describe('the collector', () => {
  let t: TestStack;
  let port: number;
  beforeAll(async () => {
    const s = await startCollectorStack('chdb');
    t = s.t;
    port = s.netflowPort;
  });
  afterAll(async () => {
    await t?.stop();
  });

  const metric = (name: string) => metricTotal(t.stack.registry, name);
  const byReason = async (name: string, reason: string) =>
    ((await t.stack.registry.getSingleMetric(name)?.get())?.values ?? []).find((v) => v.labels.reason === reason)?.value ?? 0;
  const dropped = (reason: string) => byReason('nettel_collector_dropped_datagrams_total', reason);
  const droppedFlows = (reason: string) => byReason('nettel_collector_dropped_flows_total', reason);

  test('flows of a registered exporter are stored in its workspace, scaled by the rate it reports', async () => {
    const { key, org_id } = await t.mintKey();
    await registerExporter(t, key, '127.0.0.2');
    await sendDatagrams('127.0.0.2', port, [netflowV5([record(), record({ protocol: 17, dstPort: 53, bytes: 200, packets: 2 })], { samplingRate: 10 })]);
    const sums = await waitForStoredFlows(t, org_id, 2);
    expect(sums).toEqual([
      { src_ip: '10.1.0.1', dst_ip: '10.2.0.1', protocol: 'tcp', bytes: 10_000, packets: 100, flows: 1 },
      { src_ip: '10.1.0.1', dst_ip: '10.2.0.1', protocol: 'udp', bytes: 2_000, packets: 20, flows: 1 },
    ]);
  });

  test('the rate a workspace registered for an exporter overrides the rate it reports', async () => {
    const { key, org_id } = await t.mintKey();
    await registerExporter(t, key, '127.0.0.3', 100);
    await sendDatagrams('127.0.0.3', port, [netflowV5([record()], { samplingRate: 10 })]);
    const [sum] = await waitForStoredFlows(t, org_id, 1);
    expect([sum?.bytes, sum?.packets]).toEqual([100_000, 1_000]);
    const [row] = await t.stack.clickhouse.query<{ sampling_rate: number; exporter: string }>(
      `SELECT sampling_rate, ${t.stack.clickhouse.dialect.addressText('exporter')} AS exporter FROM ${t.stack.clickhouse.database}.flows WHERE org_id = '${org_id}'`,
    );
    expect(row).toEqual({ sampling_rate: 100, exporter: '127.0.0.3' });
  });

  test('two workspaces each see only the flows of their own exporters', async () => {
    const a = await t.mintKey();
    const b = await t.mintKey();
    await registerExporter(t, a.key, '127.0.0.4');
    await registerExporter(t, b.key, '127.0.0.5');
    await sendDatagrams('127.0.0.4', port, [netflowV5([record({ src: '10.4.0.1' })])]);
    await sendDatagrams('127.0.0.5', port, [netflowV5([record({ src: '10.5.0.1' }), record({ src: '10.5.0.2' })])]);
    expect((await waitForStoredFlows(t, a.org_id, 1)).map((s) => s.src_ip)).toEqual(['10.4.0.1']);
    expect((await waitForStoredFlows(t, b.org_id, 2)).map((s) => s.src_ip)).toEqual(['10.5.0.1', '10.5.0.2']);
  });

  test('an unregistered exporter\'s flows are stored nowhere and listed for the platform admin', async () => {
    const src = `10.6.${randomBytes(1)[0]}.1`;
    await sendDatagrams('127.0.0.6', port, [netflowV5([record({ src }), record({ src })]), netflowV5([record({ src })])]);
    const listed = await waitFor(async () => {
      const res = await t.request<DataOf<UnknownExporterView>>('GET', '/v1/exporters/unknown', { key: t.adminKey });
      const row = res.body.data.find((r) => r.address === '127.0.0.6');
      return row && row.datagrams >= 2 && row.flows >= 3 ? row : undefined;
    }, 15_000, '127.0.0.6 among unknown exporters');
    expect(listed).toMatchObject({ datagrams: 2, flows: 3 });
    expect(await storedCount(t.stack.clickhouse, 'flows', `${t.stack.clickhouse.dialect.addressText('src_ip')} = '${src}'`)).toBe(0);
  });

  test('a pending exporter routes nothing, its datagrams counting as unknown, until the platform admin approves it', async () => {
    const { key, org_id } = await t.mintKey();
    const registered = await t.request<ExporterView>('POST', '/v1/exporters', { key, body: { address: '127.0.0.11' } });
    expect([registered.status, registered.body.status]).toEqual([201, 'pending']);
    // An exporter approved after the pending one is routed: the collector has read the registry since.
    await registerExporter(t, (await t.mintKey()).key, '127.0.0.12');
    expect(t.stack.collector?.routes('127.0.0.11')).toBe(false);
    const before = await droppedFlows('unregistered_exporter');
    await sendDatagrams('127.0.0.11', port, [netflowV5([record({ src: '10.11.0.1' })])]);
    await waitFor(async () => ((await droppedFlows('unregistered_exporter')) > before ? true : undefined), 5_000, 'the flow to be dropped as unregistered');
    await waitFor(async () => {
      const res = await t.request<DataOf<UnknownExporterView>>('GET', '/v1/exporters/unknown', { key: t.adminKey });
      return res.body.data.find((r) => r.address === '127.0.0.11' && r.datagrams >= 1 && r.flows >= 1);
    }, 15_000, '127.0.0.11 among unknown exporters');
    expect(await storedFlowSums(t, org_id)).toEqual([]);

    expect((await t.request('POST', `/v1/exporters/${registered.body.id}/approve`, { key: t.adminKey })).status).toBe(200);
    await waitFor(() => Promise.resolve(t.stack.collector?.routes('127.0.0.11') ? true : undefined), 5_000, 'the approval to reach the collector');
    await sendDatagrams('127.0.0.11', port, [netflowV5([record({ src: '10.11.0.2' })])]);
    expect((await waitForStoredFlows(t, org_id, 1)).map((s) => s.src_ip)).toEqual(['10.11.0.2']);
  });

  test('a removed exporter\'s flows stop being stored within seconds', async () => {
    const { key, org_id } = await t.mintKey();
    const id = await registerExporter(t, key, '127.0.0.7');
    expect((await t.request('DELETE', `/v1/exporters/${id}`, { key })).status).toBe(200);
    await waitFor(() => Promise.resolve(t.stack.collector?.routes('127.0.0.7') ? undefined : true), 5_000, 'the removal to reach the collector');
    const unregistered = () => droppedFlows('unregistered_exporter');
    const before = await unregistered();
    await sendDatagrams('127.0.0.7', port, [netflowV5([record()])]);
    await waitFor(async () => ((await unregistered()) > before ? true : undefined), 5_000, 'the flow to be dropped as unregistered');
    expect(await storedFlowSums(t, org_id)).toEqual([]);
  });

  test('garbage, truncated and unknown-template datagrams are counted by reason, and collection goes on', async () => {
    const { key, org_id } = await t.mintKey();
    await registerExporter(t, key, '127.0.0.8');
    const good = netflowV5([record()]);
    const bad = [randomBytes(300), good.subarray(0, 30), Buffer.from([0, 9]), netflowV9UnknownTemplate(4_000)];
    await sendDatagrams('127.0.0.8', port, [...bad, good]);
    await waitForStoredFlows(t, org_id, 1);
    await waitFor(async () => ((await dropped('decode_error')) >= 3 && (await dropped('unknown_template')) >= 1 ? true : undefined), 10_000, 'drops by reason');
    expect((await storedFlowSums(t, org_id)).map((s) => [s.src_ip, s.flows])).toEqual([['10.1.0.1', 1]]);
  });

  test('a flood of templates does not stop collection', async () => {
    const { key, org_id } = await t.mintKey();
    await registerExporter(t, key, '127.0.0.9');
    const before = await metric('nettel_collector_templates_total');
    const flood = Array.from({ length: 50 }, (_, i) => netflowV9Templates(300 + i * 100, 100));
    await sendDatagrams('127.0.0.9', port, [...flood, netflowV5([record()])]);
    expect((await waitForStoredFlows(t, org_id, 1)).map((s) => s.flows)).toEqual([1]);
    await waitFor(async () => ((await metric('nettel_collector_templates_total')) - before >= 5_000 ? true : undefined), 10_000, 'templates counted');
  });

  test('GoFlow2 killed is started again, health says so meanwhile, and collection resumes', async () => {
    const { key, org_id } = await t.mintKey();
    await registerExporter(t, key, '127.0.0.10');
    const pid = t.stack.collector!.goflow2Pid!;
    process.kill(pid, 'SIGKILL');
    const degraded = await waitFor(async () => {
      const res = await t.request<HealthView>('GET', '/healthz');
      return res.status === 503 ? res.body : undefined;
    }, 5_000, 'health to show the collector down');
    expect(degraded.loops.collector?.status).toBe('down');
    await waitFor(async () => ((await t.request('GET', '/healthz')).status === 200 ? true : undefined), 10_000, 'GoFlow2 to be back');
    expect(t.stack.collector!.goflow2Pid).not.toBe(pid);
    expect(await metric('nettel_collector_goflow2_restarts_total')).toBe(1);
    await sendDatagrams('127.0.0.10', port, [netflowV5([record()])]);
    expect((await waitForStoredFlows(t, org_id, 1)).map((s) => s.flows)).toEqual([1]);
  });
});
