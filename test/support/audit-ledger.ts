import { AuditLedger } from '../../application/audit-ledger';
import { Registry } from 'prom-client';
import { AuditRepo } from '../../storage/audit-repo';
import { AuditHeads } from '../../streams/audit-heads';
import type { TestStack } from './test-stack';

/**
 * An audit ledger of the test's own over the stack's engines (ClickHouse and
 * the heads bucket in NATS), as the API and the temporal-worker role build
 * theirs; its heads are stopped when `work` ends.
 */
export async function withAuditLedger<T>(t: TestStack, work: (ledger: AuditLedger, heads: AuditHeads) => Promise<T>, registry: Registry = new Registry()): Promise<T> {
  const heads = new AuditHeads(t.stack.nats, t.stack.config.nats.prefix, t.stack.config.nats.replicas);
  await heads.start();
  try {
    return await work(new AuditLedger(new AuditRepo(t.stack.clickhouse), heads, registry, t.stack.config.audit.chainKey), heads);
  } finally {
    await heads.stop();
  }
}
