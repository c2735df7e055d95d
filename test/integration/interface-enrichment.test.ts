import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { str } from '../../storage/sql';
import { registerExporter, startCollectorStack, waitForStoredFlows } from '../support/collector';
import { softflowdExport } from '../support/flow-exporters';
import { writePcap } from '../support/pcap';
import { metricTotal } from '../support/metrics';
import { startSnmpd, type AgentInterface, type RunningSnmpd } from '../support/snmpd';
import { transports, type TestStack } from '../support/test-stack';

/**
 * Interface names by SNMP against Debian's snmpd on loopback (v2c and v3
 * authPriv, and an agent killed mid-way), static interfaces, and the
 * classification rules over the API, on both ClickHouse generations.
 */
const agentInterfaces: AgentInterface[] = [
  { index: 3, name: 'et-0/0/3', alias: 'Transit: Cogent 174', highSpeed: 100_000 },
  { index: 7, name: 'xe-1/0/7', alias: 'Cust: ACME', highSpeed: 10_000 },
];
const community = 'c0mmunity-s3cret';
const v3 = { user: 'nettel', authKey: 'auth-key-s3cret', privKey: 'priv-key-s3cret' };
const rules = [
  'Exporter.Name matches "^([a-z]+)[0-9]*\\\\.([a-z]+)$" -> group $1, site $2',
  'Interface.Description matches "^Transit: (\\\\S+)" -> boundary external, connectivity transit, provider $1',
  'Interface.Description startsWith "Cust:" -> boundary external, connectivity customer',
  'true -> boundary internal',
].join('\n');

interface InterfaceView {
  index: number;
  name: string;
  description: string;
  speed: number;
  source: string;
  boundary: string | null;
  connectivity: string | null;
  provider: string | null;
}

describe.each(transports)('interface enrichment on %s', (transport) => {
  let t: TestStack;
  let netflowPort: number;
  let dir: string;
  const agents: RunningSnmpd[] = [];
  let n = 0;
  beforeAll(async () => {
    const s = await startCollectorStack(transport, { COLLECTOR_WORKERS: '1', SNMP_REFRESH_SECONDS: '3600', SNMP_TIMEOUT_MS: '300', SNMP_RETRIES: '0' });
    ({ t, netflowPort } = s);
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'nettel-enrichment-'));
  });
  afterAll(async () => {
    for (const agent of agents) await agent.stop();
    await t?.stop();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  /** A workspace with rules, an exporter at its own loopback address and an agent there. */
  async function exporterWithAgent(name = 'edge1.par', interfaces = agentInterfaces) {
    const address = `127.0.6.${++n}`;
    const { key, org_id } = await t.mintKey();
    const id = await registerExporter(t, key, address);
    await t.request('PATCH', `/v1/exporters/${id}`, { key, body: { name } });
    expect((await t.request('PUT', '/v1/classification-rules', { key, body: { rules } })).status).toBe(200);
    const agent = await startSnmpd({ address, interfaces, community, v3 });
    agents.push(agent);
    return { key, org_id, id, address, agent };
  }

  const interfacesOf = async (key: string, id: string) => (await t.request<{ data: InterfaceView[] }>('GET', `/v1/exporters/${id}/interfaces`, { key })).body.data;

  test("a v2c agent's interfaces are stored with their names, descriptions and speeds, classified by the workspace's rules", async () => {
    const { key, id, agent } = await exporterWithAgent();
    const put = await t.request('PUT', `/v1/exporters/${id}/snmp`, { key, body: { version: '2c', port: agent.port, community } });
    expect(put.status).toBe(200);
    await t.stack.snmpPoller!.pollNow();
    expect(await interfacesOf(key, id)).toEqual([
      { index: 3, name: 'et-0/0/3', description: 'Transit: Cogent 174', speed: 100_000, source: 'snmp', boundary: 'external', connectivity: 'transit', provider: 'Cogent', rules_version: 1 },
      { index: 7, name: 'xe-1/0/7', description: 'Cust: ACME', speed: 10_000, source: 'snmp', boundary: 'external', connectivity: 'customer', provider: null, rules_version: 1 },
    ]);
    const status = await t.request<{ agent: { status: string; interfaces: number } }>('GET', `/v1/exporters/${id}/snmp`, { key });
    expect(status.body.agent).toMatchObject({ status: 'ok', interfaces: 2 });
  });

  test('a v3 authPriv agent answers, and its keys are neither answered nor stored in the clear', async () => {
    const { key, id, agent, org_id } = await exporterWithAgent();
    const settings = { version: '3', port: agent.port, user: v3.user, auth_protocol: 'sha256', auth_key: v3.authKey, priv_protocol: 'aes', priv_key: v3.privKey };
    const put = await t.request('PUT', `/v1/exporters/${id}/snmp`, { key, body: settings });
    expect(put.status).toBe(200);
    expect(put.text).not.toContain(v3.authKey);
    expect(put.text).not.toContain(v3.privKey);
    await t.stack.snmpPoller!.pollNow();
    expect((await interfacesOf(key, id)).map((i) => i.name)).toEqual(['et-0/0/3', 'xe-1/0/7']);
    const got = await t.request('GET', `/v1/exporters/${id}/snmp`, { key });
    expect(got.body).toMatchObject({ snmp: { version: '3', user: 'nettel', auth_protocol: 'sha256', priv_protocol: 'aes' } });
    expect(got.text).not.toMatch(/s3cret|sealed/);
    const ch = t.stack.clickhouse;
    const stored = await ch.query<{ snmp: string }>(`SELECT snmp FROM ${ch.database}.exporter_snmp WHERE org_id = ${str(org_id)}`);
    expect(stored.length).toBeGreaterThan(0);
    for (const row of stored) expect(row.snmp).not.toContain('s3cret');
    const audit = await t.request('GET', '/v1/audit', { key });
    expect(audit.text).toContain('exporter.snmp.update');
    expect(audit.text).not.toContain('s3cret');
  });

  test('an agent that stops answering keeps its last names and is reported in its status, /healthz and the metrics', async () => {
    const { key, id, agent } = await exporterWithAgent();
    await t.request('PUT', `/v1/exporters/${id}/snmp`, { key, body: { version: '2c', port: agent.port, community } });
    await t.stack.snmpPoller!.pollNow();
    agent.kill();
    await t.stack.snmpPoller!.pollNow();
    expect((await interfacesOf(key, id)).map((i) => i.name)).toEqual(['et-0/0/3', 'xe-1/0/7']);
    const status = await t.request<{ agent: { status: string; failing_since: string | null; error: string | null } }>('GET', `/v1/exporters/${id}/snmp`, { key });
    expect(status.body.agent.status).toBe('failing');
    expect(status.body.agent.failing_since).not.toBeNull();
    expect(status.body.agent.error).toBeTruthy();
    const health = await t.request<{ snmp_agents: { failing: number; agents?: Array<{ exporter_id: string }> } }>('GET', '/healthz', { key: t.adminKey });
    expect(health.body.snmp_agents.agents?.map((a) => a.exporter_id)).toContain(id);
    const anonymous = await t.request<{ snmp_agents: { failing: number; agents?: unknown } }>('GET', '/healthz');
    expect(anonymous.body.snmp_agents.failing).toBeGreaterThanOrEqual(1);
    expect(anonymous.body.snmp_agents.agents).toBeUndefined();
    expect(await metricTotal(t.stack.registry, 'nettel_snmp_agents_failing')).toBeGreaterThanOrEqual(1);
  });

  test('a static interface wins over the agent for its index, and another workspace cannot see or set them', async () => {
    const { key, id, agent } = await exporterWithAgent();
    await t.request('PUT', `/v1/exporters/${id}/snmp`, { key, body: { version: '2c', port: agent.port, community } });
    await t.stack.snmpPoller!.pollNow();
    const statics = { interfaces: [{ index: 7, name: 'static-7', description: 'IX: FranceIX', speed: 1000 }, { index: 9, name: 'static-9' }] };
    expect((await t.request('PUT', `/v1/exporters/${id}/interfaces`, { key, body: statics })).status).toBe(200);
    await t.stack.snmpPoller!.pollNow();
    const byIndex = new Map((await interfacesOf(key, id)).map((i) => [i.index, i]));
    expect(byIndex.get(3)).toMatchObject({ name: 'et-0/0/3', source: 'snmp' });
    expect(byIndex.get(7)).toMatchObject({ name: 'static-7', description: 'IX: FranceIX', speed: 1000, source: 'static', boundary: 'internal' });
    expect(byIndex.get(9)).toMatchObject({ name: 'static-9', source: 'static' });
    const other = await t.mintKey();
    expect((await t.request('GET', `/v1/exporters/${id}/interfaces`, { key: other.key })).status).toBe(404);
    expect((await t.request('GET', `/v1/exporters/${id}/snmp`, { key: other.key })).status).toBe(404);
    expect((await t.request('PUT', `/v1/exporters/${id}/interfaces`, { key: other.key, body: statics })).status).toBe(404);
  });

  test('bad rule text is 400 naming its line and column; an evaluation answers decisions and stores nothing', async () => {
    const { key } = await t.mintKey();
    const bad = await t.request<{ error: { code: string; details: Array<{ path: string; message: string }> } }>('PUT', '/v1/classification-rules', {
      key, body: { rules: 'true -> site a\nInterface.Speed startsWith "1" -> boundary external' },
    });
    expect(bad.status).toBe(400);
    expect(bad.body.error.code).toBe('VALIDATION_ERROR');
    expect(bad.body.error.details[0]?.path).toBe('rules');
    expect(bad.body.error.details[0]?.message).toMatch(/^line 2, column 17: expected an operator for Interface.Speed/);
    const evaluated = await t.request('POST', '/v1/classification-rules/evaluate', {
      key, body: { rules, exporter: { name: 'core2.fra', address: '192.0.2.1' }, interfaces: [{ index: 1, description: 'Transit: Lumen' }] },
    });
    expect(evaluated.status).toBe(200);
    expect(evaluated.body).toEqual({
      exporter: { group: 'core', site: 'fra' },
      interfaces: [{ index: 1, classification: { boundary: 'external', connectivity: 'transit', provider: 'Lumen' } }],
    });
    expect((await t.request('GET', '/v1/classification-rules', { key })).body).toMatchObject({ version: 0, rules: '' });
  });

  test('a change of rules is the next version, audited, and classifies the stored interfaces again', async () => {
    const { key, id, agent } = await exporterWithAgent();
    await t.request('PUT', `/v1/exporters/${id}/snmp`, { key, body: { version: '2c', port: agent.port, community } });
    await t.stack.snmpPoller!.pollNow();
    const changed = await t.request('PUT', '/v1/classification-rules', { key, body: { version: 1, rules: 'Interface.Speed >= 100000 -> connectivity pni, provider "big"' } });
    expect(changed.body).toMatchObject({ version: 2 });
    expect((await t.request('PUT', '/v1/classification-rules', { key, body: { version: 1, rules: 'true -> site x' } })).status).toBe(409);
    const byIndex = new Map((await interfacesOf(key, id)).map((i) => [i.index, i]));
    expect(byIndex.get(3)).toMatchObject({ connectivity: 'pni', provider: 'big', boundary: null, rules_version: 2 });
    expect(byIndex.get(7)).toMatchObject({ connectivity: null, provider: null, rules_version: 2 });
    const audit = await t.request<{ data: Array<{ action: string }> }>('GET', '/v1/audit', { key });
    expect(audit.body.data.filter((e) => e.action === 'classification_rules.update')).toHaveLength(2);
  });

  test('softflowd flows through the collector come out with interface names and classification in top-N, filters and series', async () => {
    // softflowd reading a pcap reports ifIndex 0 for both interfaces (its `-i idx:` applies to live capture only): the agent names index 0.
    const transit: AgentInterface = { index: 0, name: 'et-0/0/0', alias: 'Transit: Cogent 174', highSpeed: 100_000 };
    const { key, org_id, id, address, agent } = await exporterWithAgent('edge4.ams', [transit]);
    await t.request('PUT', `/v1/exporters/${id}/snmp`, { key, body: { version: '2c', port: agent.port, community } });
    await t.stack.snmpPoller!.pollNow();
    const file = path.join(dir, `softflowd-${transport}.pcap`);
    writePcap(file, [
      { src: '10.30.0.1', dst: '10.40.0.1', protocol: 'tcp', srcPort: 40001, dstPort: 443, packets: 6, payloadBytes: 500 },
      { src: '10.30.0.2', dst: '10.40.0.2', protocol: 'udp', srcPort: 5000, dstPort: 53, packets: 3, payloadBytes: 80 },
    ]);
    await softflowdExport({ pcap: file, port: netflowPort, version: 10, sourceIp: address, paceMs: 1 });
    const stored = await waitForStoredFlows(t, org_id, 2);
    const packets = stored.reduce((sum, f) => sum + f.packets, 0);
    const top = await t.request<{ data: Array<Record<string, unknown>> }>('GET', '/v1/telemetry/flows/top?by=in_if_name,in_if_provider,exporter_site&metric=packets', { key });
    expect(top.status).toBe(200);
    expect(top.body.data).toEqual([{ in_if_name: 'et-0/0/0', in_if_provider: 'Cogent', exporter_site: 'ams', packets, flows: stored.reduce((sum, f) => sum + f.flows, 0) }]);
    const external = await t.request<{ data: Array<{ packets: number }> }>(
      'GET', '/v1/telemetry/flows/top?by=out_if_connectivity,exporter_group&metric=packets&in_if_boundary=external&in_if_speed=100000', { key },
    );
    expect(external.body.data).toEqual([{ out_if_connectivity: 'transit', exporter_group: 'edge', packets, flows: top.body.data[0]?.flows }]);
    const internal = await t.request<{ data: unknown[] }>('GET', '/v1/telemetry/flows/top?by=dst_ip&in_if_boundary=internal', { key });
    expect(internal.body.data).toEqual([]);
    const series = await t.request<{ series: Array<{ key: unknown; points: Array<{ packets: number }> }> }>(
      'GET', '/v1/telemetry/flows/series?split_by=in_if_connectivity&step=60', { key },
    );
    expect(series.status).toBe(200);
    const transitSeries = series.body.series.find((x) => JSON.stringify(x.key) === JSON.stringify({ in_if_connectivity: 'transit' }));
    expect(transitSeries?.points.reduce((sum, p) => sum + p.packets, 0)).toBe(packets);
  });
});
