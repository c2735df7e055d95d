import { loadDatabases } from '../application/enrichment/database-files';
import { enrichmentJsonTail, enrichmentOf } from '../core/enrichment/flow-enrichment';
import { NetworkTable } from '../core/enrichment/networks';
import { flowRowJson, type FlowInput } from '../core/flow';

/**
 * The enrichment's cost per flow, alone (no HTTP, no NATS): the packaged
 * databases loaded as the service loads them, then flows of random public
 * addresses (3 in 4 IPv4) enriched and written as stored lines, against the
 * same lines without enrichment. `node dist/bench/enrichment-lookup.js`.
 */
function random(seed: number) {
  let s = seed >>> 0;
  return () => ((s = (Math.imul(s, 1664525) + 1013904223) >>> 0) / 2 ** 32);
}

function flows(count: number): FlowInput[] {
  const next = random(33);
  const v4 = () => [1 + Math.floor(next() * 222), Math.floor(next() * 256), Math.floor(next() * 256), 1 + Math.floor(next() * 254)].join('.');
  const v6 = () => ['2001', '2a00', '2600', '2c0f'][Math.floor(next() * 4)] + ':' + Array.from({ length: 7 }, () => Math.floor(next() * 65536).toString(16)).join(':');
  const address = () => (next() < 0.75 ? v4() : v6());
  return Array.from({ length: count }, () => ({ src_ip: address(), dst_ip: address(), bytes: 1500, packets: 3, protocol: 'tcp', src_port: 443, dst_port: 50000, tcp_flags: 0x1a }));
}

function perFlowUs(list: readonly FlowInput[], fn: (f: FlowInput) => unknown): number {
  for (let i = 0; i < Math.min(list.length, 20_000); i++) fn(list[i]!);
  const start = process.hrtime.bigint();
  for (const f of list) fn(f);
  return Number(process.hrtime.bigint() - start) / 1e3 / list.length;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/**
 * What `npm run bench` reports (issue 33): the enrichment's cost a flow, the
 * stored line enriched less the same line without, with the packaged
 * databases and random public addresses; the median of three rounds.
 */
export async function enrichmentCost(count = 200_000): Promise<{ us_per_flow: number; plain_line_us: number; enriched_line_us: number }> {
  const dbs = await loadDatabases({});
  const list = flows(count);
  const stamp = { org_id: 'org_bench', event_id: 'evt_0000000000000000_0000', ts: 1_764_000_000_000, received_at: 1_764_000_000_000 };
  const plain: number[] = [];
  const enriched: number[] = [];
  for (let round = 0; round < 3; round++) {
    plain.push(perFlowUs(list, (f) => flowRowJson(f, stamp)));
    enriched.push(perFlowUs(list, (f) => flowRowJson(f, stamp, enrichmentJsonTail(enrichmentOf(f, dbs)))));
  }
  const [p, e] = [median(plain), median(enriched)];
  return { us_per_flow: Math.round((e - p) * 1000) / 1000, plain_line_us: Math.round(p * 1000) / 1000, enriched_line_us: Math.round(e * 1000) / 1000 };
}

async function main(): Promise<void> {
  const t0 = Date.now();
  const dbs = await loadDatabases({});
  const loadMs = Date.now() - t0;
  const rss = Math.round(process.memoryUsage().rss / 1e6);
  // The country lookups remember up to 200,000 addresses: 200,000 random flows (400,000 addresses) mostly miss, 2,000 repeating ones hit.
  const list = flows(200_000);
  const repeating = Array.from({ length: 200_000 }, (_, i) => list[i % 2_000]!);
  const stamp = { org_id: 'org_bench', event_id: 'evt_0000000000000000_0000', ts: 1_764_000_000_000, received_at: 1_764_000_000_000 };
  const networks = new NetworkTable(Array.from({ length: 200 }, (_, i) => ({ prefix: `10.${i}.0.0/16`, name: `net${i}`, role: 'servers', site: 'par1', tenant: '', tags: [] })));
  const rows: Record<string, number> = {};
  for (let round = 0; round < 3; round++) {
    rows[`round ${round + 1}: AS lookup, one address`] = perFlowUs(list, (f) => dbs.asOf(f.src_ip));
    rows[`round ${round + 1}: country lookup, one address`] = perFlowUs(list, (f) => dbs.countryOf(f.src_ip));
    rows[`round ${round + 1}: stored line, no enrichment`] = perFlowUs(list, (f) => flowRowJson(f, stamp));
    rows[`round ${round + 1}: stored line, enriched`] = perFlowUs(list, (f) => flowRowJson(f, stamp, enrichmentJsonTail(enrichmentOf(f, dbs))));
    rows[`round ${round + 1}: stored line, enriched, 200 networks`] = perFlowUs(list, (f) => flowRowJson(f, stamp, enrichmentJsonTail(enrichmentOf(f, dbs, networks))));
    rows[`round ${round + 1}: stored line, enriched, 2,000 addresses repeating`] = perFlowUs(repeating, (f) => flowRowJson(f, stamp, enrichmentJsonTail(enrichmentOf(f, dbs))));
  }
  console.log(JSON.stringify({ loadMs, rssMb: rss, perFlowUs: Object.fromEntries(Object.entries(rows).map(([k, v]) => [k, Number(v.toFixed(3))])) }, null, 2));
}

if (require.main === module) void main();
