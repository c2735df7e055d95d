import { randomInt } from 'node:crypto';
import type { RequestOptions, TestStack } from './test-stack';

/** The analyst API's calls, imported by the contract test from here with the others. */
export { analystCalls } from './contract-analyst';

/** A call of the contract test (test/integration/contract.test.ts): its key, body, query and path ids. */
export type ContractCall = RequestOptions & { query?: string; fill?: Record<string, string> };
type Both = (method: string, path: string, ok: ContractCall & { status: number }, ...bad: ContractCall[]) => Promise<unknown>;

/** The interface-enrichment and classification-rule routes, each called once as documented and refused each way, on an active exporter. */
export async function enrichmentCalls(both: Both, t: TestStack, key: string): Promise<void> {
  const exporter = (await t.request<{ id: string }>('POST', '/v1/exporters', { key, body: { address: `198.18.${randomInt(256)}.${randomInt(1, 255)}` } })).body.id;
  await t.request('POST', `/v1/exporters/${exporter}/approve`, { key: t.adminKey });
  const noKey = { key: '' };
  const unknown = { fill: { id: 'exp_unknown' } };
  const at = { fill: { id: exporter } };
  await both('PUT', '/v1/exporters/{id}/snmp', { ...at, body: { version: '2c', community: 'contract' }, status: 200 }, { ...at, ...noKey }, { ...at, body: { version: '4' } }, { ...unknown, body: { version: '2c', community: 'x' } });
  await both('GET', '/v1/exporters/{id}/snmp', { ...at, status: 200 }, { ...at, ...noKey }, unknown, { ...at, query: '?colour=red' });
  const statics = { interfaces: [{ index: 1, name: 'et-0/0/1', description: 'Transit: Contract', speed: 1000 }] };
  await both('PUT', '/v1/exporters/{id}/interfaces', { ...at, body: statics, status: 200 }, { ...at, ...noKey }, { ...at, body: { interfaces: [{ index: -1 }] } }, { ...unknown, body: statics });
  await both('GET', '/v1/exporters/{id}/interfaces', { ...at, status: 200 }, { ...at, ...noKey }, unknown, { ...at, query: '?colour=red' });
  await both('DELETE', '/v1/exporters/{id}/snmp', { ...at, status: 200 }, { ...at, ...noKey }, unknown);
  await both('GET', '/v1/classification-rules', { status: 200 }, noKey, { query: '?colour=red' });
  await both('PUT', '/v1/classification-rules', { body: { rules: 'true -> site contract' }, status: 200 }, noKey, { body: { rules: 'true ->' } });
  await both('GET', '/v1/classification-rules/versions/{version}', { fill: { version: '1' }, status: 200 }, noKey, { fill: { version: '99' } }, { fill: { version: 'x' } });
  const sample = { rules: 'true -> boundary external', exporter: { name: 'edge', address: '192.0.2.1' }, interfaces: [{ index: 1 }] };
  await both('POST', '/v1/classification-rules/evaluate', { body: sample, status: 200 }, noKey, { body: { ...sample, exporter: { address: 'x' } } }, { body: { ...sample, rules: 'true' } });
}

/** A workspace's networks (the address enrichment's own document): read, written, its versions. */
export async function networkCalls(both: Both): Promise<void> {
  const noKey = { key: '' };
  await both('GET', '/v1/networks', { status: 200 }, noKey, { query: '?colour=red' });
  await both('PUT', '/v1/networks', { body: { networks: [{ prefix: '198.51.100.0/24', name: 'web' }] }, status: 200 }, noKey, { body: { networks: [{ prefix: 'nope', name: 'web' }] } });
  await both('GET', '/v1/networks/versions/{version}', { fill: { version: '1' }, status: 200 }, noKey, { fill: { version: '99' } }, { fill: { version: 'x' } });
}
