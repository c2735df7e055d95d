import { randomBytes, randomInt } from 'node:crypto';
import type { AuditEntryView, ErrorBody, ExporterView, Page, PendingExporterView, WorkspaceExporterView } from './api-types';
import { registerApprovedExporter } from './exporters';
import type { TestStack } from './test-stack';

/** `expect.stringMatching(pattern)`, typed as what it is to the compiler: a value to compare with. */
export const stringMatching = (pattern: RegExp): unknown => expect.stringMatching(pattern);
/** An IPv4 address no other test of the file uses. */
export const freshIpv4 = () => `10.${randomInt(256)}.${randomInt(256)}.${randomInt(1, 255)}`;
export const freshIpv6 = () => `2001:db8:${randomBytes(2).toString('hex')}::${randomBytes(2).toString('hex')}`;
export const hex20 = () => randomBytes(10).toString('hex');

/** The exporter routes' calls on a test stack (given late: stacks start in beforeAll). */
export function exporterCalls(stack: () => TestStack) {
  const audit = async (key: string) => (await stack().request<Page<AuditEntryView>>('GET', '/v1/audit', { key })).body.data;
  return {
    create: (key: string, body: unknown) => stack().request<ExporterView>('POST', '/v1/exporters', { key, body }),
    audit,
    auditActions: async (key: string) => (await audit(key)).map((e) => e.action),
    decide: (decision: 'approve' | 'reject', id: string, key = stack().adminKey) =>
      stack().request<WorkspaceExporterView & ErrorBody>('POST', `/v1/exporters/${id}/${decision}`, { key }),
    approved: (key: string, address: string) => registerApprovedExporter(stack(), key, { address }),
    statusOf: async (key: string, id: string) => (await stack().request<ExporterView>('GET', `/v1/exporters/${id}`, { key })).body.status,
    /** Every pending registration of every workspace, following the cursor. */
    allPending: async () => {
      const rows: PendingExporterView[] = [];
      for (let cursor = ''; ; ) {
        const page = await stack().request<Page<PendingExporterView>>('GET', `/v1/exporters/pending?limit=1000${cursor}`, { key: stack().adminKey });
        rows.push(...page.body.data);
        if (!page.body.next_cursor) return rows;
        cursor = `&cursor=${page.body.next_cursor}`;
      }
    },
  };
}
