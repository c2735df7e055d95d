import type { ApiResponse, RequestOptions, TestStack } from './test-stack';

type Call = RequestOptions & { query?: string; fill?: Record<string, string> };
/** contract.test.ts's `both`: a valid call expected to answer `status`, then refused calls, each checked against the document. */
type Both = (method: string, path: string, ok: Call & { status: number }, ...bad: Call[]) => Promise<ApiResponse>;

/**
 * The guardrail routes (issue 32, item 4) called for contract.test.ts, kept
 * here so that file stays within its length: four eyes turned on, a
 * loosening held twice (once denied, once approved by another person), and
 * the workspace left as it was (four eyes off).
 */
export async function callGuardrailRoutes(t: TestStack, both: Both, orgId: string): Promise<void> {
  const other = await t.mintKey({ role: 'approver', orgId });
  const noKey = { key: '' };
  await both('GET', '/v1/guardrails', { status: 200 }, noKey, { query: '?colour=red' });
  await both('PUT', '/v1/guardrails', { body: { four_eyes: true }, status: 200 }, noKey, { body: { four_eyes: 'yes' } });
  const held = async () => ((await both('PUT', '/v1/guardrails', { body: { four_eyes: false }, status: 202 }, { body: {} })).body as { change_id: string }).change_id;
  const denied = await held();
  await both('GET', '/v1/guardrail-changes', { query: '?status=awaiting_approval', status: 200 }, noKey, { query: '?status=maybe' });
  await both('GET', '/v1/guardrail-changes/{id}', { fill: { id: denied }, status: 200 }, noKey, { fill: { id: 'grc_00000000000000000000' } });
  await both('POST', '/v1/guardrail-changes/{id}/deny', { key: other.key, fill: { id: denied }, status: 200 }, noKey, { key: other.key, fill: { id: denied } });
  const approved = await held();
  await both('POST', '/v1/guardrail-changes/{id}/approve', { key: other.key, fill: { id: approved }, status: 200 }, noKey, { fill: { id: approved } });
}
