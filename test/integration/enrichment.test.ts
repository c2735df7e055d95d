import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { registerExporter, startCollectorStack, waitForStoredFlows } from '../support/collector';
import { softflowdExport } from '../support/flow-exporters';
import { packagedCountryMmdb } from '../support/packaged-mmdb';
import { writePcap, type PcapFlow } from '../support/pcap';
import { transports, type TestStack } from '../support/test-stack';
import { waitFor, waitForTelemetryDrained } from '../support/wait';

/**
 * Enrichment end to end, on both ClickHouse generations: softflowd's
 * flows through the collector, and flows posted over HTTP, read back from
 * the analyst API with their AS numbers and names, countries, TCP flags and
 * the version of the databases that enriched them. Countries are checked
 * against Debian's mmdblookup on the same file; the country file is the
 * operator's setting, so the test can replace it while the service runs.
 */
const run = promisify(execFile);
type FlowView = Record<string, string | number | null>;

async function mmdbCountry(file: string, ip: string): Promise<string | null> {
  const out = await run('mmdblookup', ['--file', file, '--ip', ip, 'country_code']).then((r) => r.stdout, () => '');
  return /"([A-Za-z]{2})"/.exec(out)?.[1] ?? null;
}

const publicFlows: PcapFlow[] = [
  { src: '8.8.8.8', dst: '1.1.1.1', protocol: 'tcp', srcPort: 40001, dstPort: 443, packets: 6, payloadBytes: 500 },
  { src: '2001:4860:4860::8888', dst: '2606:4700:4700::1111', protocol: 'tcp', srcPort: 40002, dstPort: 443, packets: 4, payloadBytes: 300 },
];

describe.each(transports)('flow enrichment on %s', (transport) => {
  let t: TestStack;
  let ports: { netflowPort: number };
  let dir: string;
  let countryFile: string;
  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'nettel-enrich-'));
    countryFile = path.join(dir, 'country.mmdb');
    fs.copyFileSync(packagedCountryMmdb(), countryFile);
    const s = await startCollectorStack(transport, { COLLECTOR_WORKERS: '1', ENRICHMENT_COUNTRY_MMDB: countryFile, ENRICHMENT_RELOAD_CHECK_MS: '200' });
    t = s.t;
    ports = { netflowPort: s.netflowPort };
  }, 180_000);
  afterAll(async () => {
    await t?.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const flowsOf = async (key: string, query = '') => {
    const res = await t.request<{ data: FlowView[] }>('GET', `/v1/telemetry/flows?limit=100${query}`, { key });
    expect(res.status).toBe(200);
    return res.body.data;
  };

  test('softflowd flows through the collector come out with AS, country and TCP flags in the analyst API', async () => {
    const { key, org_id } = await t.mintKey({ role: 'operator' });
    await registerExporter(t, key, '127.0.5.1');
    const pcap = path.join(dir, 'public.pcap');
    const expected = writePcap(pcap, publicFlows);
    await softflowdExport({ pcap, port: ports.netflowPort, version: 10, sourceIp: '127.0.5.1', paceMs: 1 });
    await waitForStoredFlows(t, org_id, expected.length);
    const flows = await flowsOf(key);
    const names = t.stack.adapters.enrichment!.databases!.asNames;
    for (const want of expected) {
      const got = flows.find((f) => f.src_ip === want.src_ip && f.dst_ip === want.dst_ip);
      expect(got).toMatchObject({
        tcp_flags: want.tcp_flags,
        src_country: await mmdbCountry(countryFile, want.src_ip),
        dst_country: await mmdbCountry(countryFile, want.dst_ip),
        enrichment_version: t.stack.adapters.enrichment!.databases!.version,
      });
      expect(want.tcp_flags).not.toBe(0);
    }
    const google = flows.filter((f) => String(f.src_ip).startsWith('8.8.') || String(f.src_ip).startsWith('2001:4860:'));
    expect(google.map((f) => [f.src_as, f.src_as_name])).toEqual(google.map(() => [15169, names.get(15169)]));
    expect(flows.every((f) => f.dst_as === 13335 && f.dst_as_name === names.get(13335))).toBe(true);

    const top = await t.request<{ data: FlowView[] }>('GET', '/v1/telemetry/flows/top?by=dst_as&metric=packets', { key });
    expect(top.status).toBe(200);
    expect(top.body.data).toEqual([{ dst_as: 13335, dst_as_name: names.get(13335), packets: 10, flows: 2 }]);
    const byCountry = await t.request<{ data: FlowView[] }>('GET', '/v1/telemetry/flows/top?by=src_country,dst_country&metric=packets', { key });
    expect(byCountry.body.data.map((r) => r.packets).sort()).toEqual([4, 6]);
    const filtered = await flowsOf(key, `&src_country=${String(await mmdbCountry(countryFile, '8.8.8.8'))}&src_as=15169`);
    expect(filtered.length).toBeGreaterThanOrEqual(1);
  });

  test('an AS number the exporter sent wins over the database; an address no database knows stays empty', async () => {
    const { key } = await t.mintKey({ role: 'operator' });
    const posted = await t.request('POST', '/flow', { key, body: [{ src_ip: '8.8.4.4', dst_ip: '10.0.0.1', bytes: 100, packets: 1, protocol: 'udp', src_as: 64500 }] });
    expect(posted.status).toBe(201);
    await waitForTelemetryDrained(t.stack.nats.jsm, t.stack.config.nats.prefix, 20_000);
    const [flow] = await waitFor(async () => ((await flowsOf(key)).length ? flowsOf(key) : undefined), 20_000, 'the posted flow');
    expect(flow).toMatchObject({ src_as: 64500, dst_as: 0, dst_as_name: null, dst_country: null, src_country: await mmdbCountry(countryFile, '8.8.4.4') });
  });

  test('a flow stored before enrichment reads with empty enrichment, never an error', async () => {
    const { key, org_id } = await t.mintKey({ role: 'analyst' });
    const ch = t.stack.clickhouse;
    // A row as a release before enrichment wrote it: none of the new columns named.
    await ch.insertJsonEachRow('flows', JSON.stringify({ org_id, ts: Date.now() - 1000, received_at: Date.now(), event_id: 'old_1', src_ip: '8.8.8.8', dst_ip: '1.1.1.1', protocol: 'tcp', bytes: 1, packets: 1 }) + '\n');
    const [flow] = await flowsOf(key);
    expect(flow).toMatchObject({ src_as: 0, src_as_name: null, src_country: null, dst_net_name: null, enrichment_version: 0 });
    const top = await t.request<{ data: FlowView[] }>('GET', '/v1/telemetry/flows/top?by=src_country', { key });
    expect(top.body.data).toEqual([expect.objectContaining({ src_country: null })]);
  });

  test('a database file replaced while running is picked up, and flows say which version enriched them', async () => {
    const { key } = await t.mintKey({ role: 'operator' });
    const enrichment = t.stack.adapters.enrichment!;
    const before = enrichment.databases!.version;
    const post = async (id: number) => {
      const res = await t.request('POST', '/flow', { key, body: [{ src_ip: '2001:4860:4860::8844', dst_ip: '8.8.8.8', bytes: id, packets: 1, protocol: 'tcp' }] });
      expect(res.status).toBe(201);
    };
    await post(1);
    // The IPv4-only file of the same package: after the swap, IPv6 addresses have no country.
    const next = path.join(dir, 'next.mmdb');
    fs.copyFileSync(packagedCountryMmdb().replace(/\.mmdb$/, '-ipv4.mmdb'), next);
    fs.renameSync(next, countryFile);
    await waitFor(() => Promise.resolve(enrichment.databases!.version !== before ? true : undefined), 20_000, 'the new country file loaded');
    await post(2);
    await waitForTelemetryDrained(t.stack.nats.jsm, t.stack.config.nats.prefix, 20_000);
    const flows = await waitFor(async () => {
      const list = await flowsOf(key);
      return list.length === 2 ? list : undefined;
    }, 20_000, 'both flows stored');
    const byBytes = Object.fromEntries(flows.map((f) => [Number(f.bytes), f]));
    const ipv4Only = packagedCountryMmdb().replace(/\.mmdb$/, '-ipv4.mmdb');
    expect(byBytes[1]).toMatchObject({ enrichment_version: before, src_country: await mmdbCountry(packagedCountryMmdb(), '2001:4860:4860::8844') });
    expect(byBytes[1]?.src_country).not.toBeNull();
    expect(byBytes[2]).toMatchObject({ enrichment_version: enrichment.databases!.version, src_country: null, dst_country: await mmdbCountry(ipv4Only, '8.8.8.8') });
    const versions = await t.stack.clickhouse.query<{ id: string }>(`SELECT DISTINCT id FROM ${t.stack.clickhouse.database}.enrichment_versions`);
    expect(versions.map((v) => Number(v.id))).toEqual(expect.arrayContaining([before, enrichment.databases!.version]));
  });
});
