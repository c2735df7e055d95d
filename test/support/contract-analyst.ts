import type { RequestOptions } from './test-stack';

type ContractCall = RequestOptions & { query?: string; fill?: Record<string, string> };
type Both = (method: string, path: string, ok: ContractCall & { status: number }, ...bad: ContractCall[]) => Promise<unknown>;

/** The analyst API of issue 34 in the contract test: units and the previous period, and completion, each refused each way. */
export async function analystCalls(both: Both): Promise<void> {
  const noKey = { key: '' };
  await both('GET', '/v1/telemetry/flows/top', { query: '?by=src_ip,dst_ip,dst_port&unit=flows&previous=true', status: 200 }, noKey, { query: '?unit=bits' });
  await both('GET', '/v1/telemetry/flows/series', { query: '?step=60&unit=packets&previous=true', status: 200 }, noKey, { query: '?previous=yes' });
  await both('GET', '/v1/telemetry/flows/complete', { query: '?dimension=dst_ip&prefix=10.', status: 200 }, noKey, { query: '?dimension=nonsense' }, { query: '?limit=0' });
}
