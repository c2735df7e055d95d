import type { RequestOptions } from './test-stack';

type ContractCall = RequestOptions & { query?: string; fill?: Record<string, string> };
type Both = (method: string, path: string, ok: ContractCall & { status: number }, ...bad: ContractCall[]) => Promise<unknown>;

/** The analyst API of issue 34 in the contract test: units and the previous period, completion, and the saved views' CRUD, each refused each way. */
export async function analystCalls(both: Both): Promise<void> {
  const noKey = { key: '' };
  await both('GET', '/v1/telemetry/flows/top', { query: '?by=src_ip,dst_ip,dst_port&unit=flows&previous=true', status: 200 }, noKey, { query: '?unit=bits' });
  await both('GET', '/v1/telemetry/flows/series', { query: '?step=60&unit=packets&previous=true', status: 200 }, noKey, { query: '?previous=yes' });
  await both('GET', '/v1/telemetry/flows/complete', { query: '?dimension=dst_ip&prefix=10.', status: 200 }, noKey, { query: '?dimension=nonsense' }, { query: '?limit=0' });
  const state = { v: 1, filter: 'dst_port = 443', dimensions: ['src_ip'], chart: 'lines', range: { last_seconds: 3600 } };
  const created = (await both('POST', '/v1/views', { body: { name: 'contract', state }, status: 201 }, noKey, { body: { name: 'contract', state: { ...state, v: 2 } } })) as { body: { id: string } };
  const at = { fill: { id: created.body.id } };
  const unknown = { fill: { id: 'vw_unknown' } };
  await both('GET', '/v1/views', { status: 200 }, noKey, { query: '?colour=red' });
  await both('GET', '/v1/views/{id}', { ...at, status: 200 }, { ...at, ...noKey }, unknown);
  await both('PUT', '/v1/views/{id}', { ...at, body: { name: 'contract 2', state, version: 1 }, status: 200 }, { ...at, ...noKey }, { ...at, body: { name: 'x', state, version: 1 } }, { ...unknown, body: { name: 'x', state } });
  await both('DELETE', '/v1/views/{id}', { ...at, status: 200 }, { ...at, ...noKey }, at);
}
