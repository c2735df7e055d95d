import { str } from '../../storage/sql';
import { registerApprovedExporter } from './exporters';
import type { Transport, TestStack } from './test-stack';
import { startTestStack } from './test-stack';
import { freeUdpPorts } from './udp';
import { waitFor, waitForTelemetryDrained } from './wait';

/** A stack running the collector on free UDP ports, beside the API and the stream workers. */
export async function startCollectorStack(transport: Transport, extraEnv: Record<string, string> = {}) {
  const [netflowPort, sflowPort] = await freeUdpPorts(2);
  const t = await startTestStack(transport, {
    ROLES: 'api,stream-workers,collector',
    COLLECTOR_NETFLOW_PORT: String(netflowPort),
    COLLECTOR_SFLOW_PORT: String(sflowPort),
    COLLECTOR_REGISTRY_REFRESH_MS: '300',
    WORKER_MAX_WAIT_MS: '20',
    ...extraEnv,
  });
  return { t, netflowPort: netflowPort!, sflowPort: sflowPort! };
}

/** Registers an exporter in the key's workspace, has the platform admin approve it, and waits until the collector routes its address. */
export async function registerExporter(t: TestStack, key: string, address: string, samplingRate?: number): Promise<string> {
  const id = await registerApprovedExporter(t, key, { address, ...(samplingRate ? { sampling_rate: samplingRate } : {}) });
  await waitFor(() => Promise.resolve(t.stack.collector?.routes(address) ? true : undefined), 10_000, `the collector to route ${address}`);
  return id;
}

/** A workspace's stored flows summed per source, destination and protocol, as ClickHouse holds them. */
export interface FlowSum {
  src_ip: string;
  dst_ip: string;
  protocol: string;
  bytes: number;
  packets: number;
  flows: number;
}

export async function storedFlowSums(t: TestStack, orgId: string): Promise<FlowSum[]> {
  const ch = t.stack.clickhouse;
  const d = ch.dialect;
  const rows = await ch.query<Record<string, string | number>>(
    `SELECT ${d.addressText('src_ip')} AS src, ${d.addressText('dst_ip')} AS dst, protocol, sum(bytes) AS b, sum(packets) AS p, count() AS n
     FROM ${ch.database}.flows WHERE org_id = ${str(orgId)} GROUP BY src, dst, protocol ORDER BY src, dst, protocol`,
  );
  return rows.map((r) => ({ src_ip: String(r.src), dst_ip: String(r.dst), protocol: String(r.protocol), bytes: Number(r.b), packets: Number(r.p), flows: Number(r.n) }));
}

/**
 * Waits until a workspace holds `flows` collected flows in ClickHouse, then
 * until the telemetry stream has drained (every batch the collector published
 * is stored), and answers what is stored then: a flow stored twice shows as a
 * count above `flows` instead of being missed by a read taken too early.
 */
export async function waitForStoredFlows(t: TestStack, orgId: string, flows: number, timeoutMs = 30_000): Promise<FlowSum[]> {
  const total = async () => (await storedFlowSums(t, orgId)).reduce((n, s) => n + s.flows, 0);
  await waitFor(async () => ((await total()) >= flows ? true : undefined), timeoutMs, `${flows} stored flows of ${orgId}`);
  await waitForTelemetryDrained(t.stack.nats.jsm, t.stack.config.nats.prefix, timeoutMs);
  return storedFlowSums(t, orgId);
}
