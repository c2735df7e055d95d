import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { IncidentView, Page } from '../support/api-types';
import { background, carpet, hosts, interleave, ntpAmplification, synFlood, udpFlood } from '../support/attack-pcaps';
import { registerExporter, startCollectorStack, storedFlowSums } from '../support/collector';
import { pmacctExport, softflowdExport } from '../support/flow-exporters';
import { canonical, writePcap, type PcapFlow } from '../support/pcap';
import type { TestStack } from '../support/test-stack';
import { waitFor, waitForDetectionDrained, waitForTelemetryDrained } from '../support/wait';

/**
 * Attacks as real exporters report them: each test generates a pcap (test/support/attack-pcaps.ts:
 * about 4,000 attack packets 1 ms apart, some 800 packets a second over the 5-second window, with
 * ordinary traffic to other hosts in between), replays it with softflowd (IPFIX) or pmacctd's nfprobe
 * (IPFIX) or sfprobe (sFlow, a sample a packet) to the running collector, and reads the incidents the
 * rate detectors opened. Each test has its own workspace and exporter address, so no test sees
 * another's flows or incidents.
 *
 * The rules: 300 packets a second to one host, 400 to a /24 spread over at least 16 hosts. The
 * background (680 packets from 8 clients to 8 servers, answers included) brings each host at most
 * 17 packets a second over the window, and 136 to its /24.
 */
const rates = { thresholds: { total: { pps: 300 } }, carpet: { min_addresses: 16, thresholds: { total: { pps: 400 } } } };

const attackers = hosts('10.10.0.', 10);
const ordinary = () => background(hosts('10.50.0.', 8), hosts('10.40.0.', 8));
const sorted = (list: string[]) => [...list].sort();

interface Attack {
  type: string;
  vector: string;
  top_sources: Array<{ address: string }>;
  exporters: Array<{ exporter: string }>;
}

describe('rate detection from real exporters replaying attacks on chdb', () => {
  let t: TestStack;
  let netflowPort: number;
  let sflowPort: number;
  let dir: string;
  let exporters = 0;
  beforeAll(async () => {
    const s = await startCollectorStack('chdb', { COLLECTOR_WORKERS: '1' });
    t = s.t;
    netflowPort = s.netflowPort;
    sflowPort = s.sflowPort;
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'nettel-attacks-'));
  });
  afterAll(async () => {
    await t?.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  interface Workspace {
    key: string;
    org_id: string;
    address: string;
  }

  /** A workspace of its own with the rules above (and `extra`), and an exporter address of its own. */
  async function workspace(extra: object = {}): Promise<Workspace> {
    const { key, org_id } = await t.mintKey({ role: 'operator' });
    expect((await t.request('PUT', '/v1/detection-rules', { key, body: { rates: { ...rates, ...extra } } })).status).toBe(200);
    exporters += 1;
    const address = `127.0.5.${exporters}`;
    await registerExporter(t, key, address);
    return { key, org_id, address };
  }

  /** Writes the flows as a pcap (ending about a second ago) and has the exporter send them from the workspace's address. */
  async function replay(w: Workspace, flows: PcapFlow[], exporter: 'softflowd' | 'nfprobe' | 'sfprobe' = 'softflowd') {
    const pcap = path.join(dir, `${w.address}.pcap`);
    writePcap(pcap, flows);
    const common = { pcap, port: netflowPort, sourceIp: w.address, paceMs: 1 };
    if (exporter === 'softflowd') await softflowdExport({ ...common, version: 10 });
    else if (exporter === 'nfprobe') await pmacctExport({ ...common, plugin: 'nfprobe', version: 10 });
    else await pmacctExport({ ...common, port: sflowPort, plugin: 'sfprobe', agentIp: w.address });
  }

  const drained = async () => {
    await waitForTelemetryDrained(t.stack.nats.jsm, t.stack.config.nats.prefix);
    await waitForDetectionDrained(t.stack.nats.jsm, t.stack.config.nats.prefix);
  };
  const incidents = async (w: Workspace) => (await t.request<Page<IncidentView>>('GET', '/v1/incidents?limit=100', { key: w.key })).body.data;

  /** Once an incident opened and every flow was judged: each incident's target and rule (the first three parts of a version 1 rule), and the first one's attack. */
  async function opened(w: Workspace) {
    await waitFor(async () => ((await incidents(w)).length > 0 ? true : undefined), 60_000, 'an incident');
    await drained();
    const all = await incidents(w);
    const { attack } = (await t.request<{ attack: Attack }>('GET', `/v1/incidents/${all[0]!.id}`, { key: w.key })).body;
    return {
      incidents: all.map((i) => [i.service, i.rule.split(':').slice(0, 3).join(':')]),
      type: attack.type,
      top_sources: sorted(attack.top_sources.map((s) => s.address)),
      exporters: attack.exporters.map((e) => e.exporter),
    };
  }

  /**
   * The incidents once every packet of `flows` is stored and judged. Packets, not flow records:
   * softflowd reports a client's pings to one server (same ICMP id) as one flow.
   */
  async function afterAllJudged(w: Workspace, flows: PcapFlow[]) {
    const packets = flows.reduce((n, f) => n + f.packets, 0);
    const stored = async () => (await storedFlowSums(t, w.org_id)).reduce((n, s) => n + s.packets, 0);
    await waitFor(async () => ((await stored()) >= packets ? true : undefined), 60_000, `${packets} packets stored`);
    await drained();
    return incidents(w);
  }

  test('softflowd replaying a pcap of a SYN flood opens one syn_flood incident naming the attackers', async () => {
    const w = await workspace();
    await replay(w, interleave(synFlood(attackers, '10.20.0.9'), ordinary()));
    expect(await opened(w)).toEqual({ incidents: [['10.20.0.9', 'rate.v2:host']], type: 'syn_flood', top_sources: sorted(attackers), exporters: [w.address] });
  });

  test('softflowd replaying a pcap of a UDP flood opens one udp_flood incident naming the attackers', async () => {
    const w = await workspace();
    await replay(w, interleave(udpFlood(attackers, '10.20.0.10'), ordinary()));
    expect(await opened(w)).toEqual({ incidents: [['10.20.0.10', 'rate.v2:host']], type: 'udp_flood', top_sources: sorted(attackers), exporters: [w.address] });
  });

  test('softflowd replaying a pcap of an NTP amplification opens one ntp_amplification incident naming the reflectors', async () => {
    const w = await workspace();
    const reflectors = hosts('10.11.0.', 8);
    await replay(w, interleave(ntpAmplification(reflectors, '10.20.0.11'), ordinary()));
    expect(await opened(w)).toEqual({ incidents: [['10.20.0.11', 'rate.v2:host']], type: 'ntp_amplification', top_sources: sorted(reflectors), exporters: [w.address] });
  });

  test('pmacctd nfprobe replaying the NTP amplification opens the same ntp_amplification incident as softflowd', async () => {
    const w = await workspace();
    const reflectors = hosts('10.12.0.', 8);
    await replay(w, interleave(ntpAmplification(reflectors, '10.20.0.12'), ordinary()), 'nfprobe');
    expect(await opened(w)).toEqual({ incidents: [['10.20.0.12', 'rate.v2:host']], type: 'ntp_amplification', top_sources: sorted(reflectors), exporters: [w.address] });
  });

  test('pmacctd sfprobe replaying the UDP flood opens the same udp_flood incident as softflowd', async () => {
    const w = await workspace();
    await replay(w, interleave(udpFlood(attackers, '10.20.0.14'), ordinary()), 'sfprobe');
    expect(await opened(w)).toEqual({ incidents: [['10.20.0.14', 'rate.v2:host']], type: 'udp_flood', top_sources: sorted(attackers), exporters: [w.address] });
  });

  test('a carpet attack spread over a /24, no host over its threshold, opens one carpet incident on the /24 naming the attackers', async () => {
    const w = await workspace();
    // 4,000 packets over 64 hosts: about 12 a second each, some 800 a second to the /24.
    await replay(w, interleave(carpet(attackers, '10.30.0.', 64), ordinary()));
    expect(await opened(w)).toEqual({ incidents: [['10.30.0.0/24', 'rate.v2:prefix']], type: 'carpet', top_sources: sorted(attackers), exporters: [w.address] });
  });

  test('ordinary background traffic (web, DNS, ping) below the thresholds opens no incident', async () => {
    const w = await workspace();
    const flows = ordinary();
    await replay(w, flows);
    expect(await afterAllJudged(w, flows)).toEqual([]);
  });

  test('a UDP flood from a whitelisted source prefix opens no incident', async () => {
    const w = await workspace({ whitelist: { sources: ['10.13.0.0/24'] } });
    const flows = udpFlood(hosts('10.13.0.', 10), '10.20.0.13');
    await replay(w, flows);
    expect(await afterAllJudged(w, flows)).toEqual([]);
  });

  test('an IPv6 SYN flood through softflowd opens one syn_flood incident naming its attackers, as an IPv4 one does', async () => {
    const w = await workspace();
    const attackers6 = hosts('2001:db8:10::', 10);
    await replay(w, interleave(synFlood(attackers6, '2001:db8:20::9'), background(hosts('2001:db8:50::', 8), hosts('2001:db8:40::', 8))));
    expect(await opened(w)).toEqual({
      incidents: [[canonical('2001:db8:20::9'), 'rate.v2:host']],
      type: 'syn_flood',
      top_sources: sorted(attackers6.map(canonical)),
      exporters: [w.address],
    });
  });
});
