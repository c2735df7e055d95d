import { chainEntry, chainStart, genesisHash, verifyChain, type AuditEntry, type ChainVerdict } from '../core/audit-chain';
import type { Metrics } from '../service/metrics';
import type { AuditRepo } from './audit-repo';

export interface AuditEvent {
  orgId: string;
  /** Who: the key id of the caller, or `platform-admin`. */
  actor: string;
  /** What: a dotted verb such as `api_key.create`. */
  action: string;
  /** On what: the id of the object acted on. */
  target: string;
  details?: Record<string, unknown>;
}

/**
 * Appends audit entries chained by hash per org. Appends of one org are
 * serialized in this process, so each entry links to the one before it.
 * Running several API processes against one ledger needs a single writer
 * per org (see README, "Audit ledger").
 */
export class AuditLedger {
  private readonly heads = new Map<string, { seq: number; hash: string }>();
  private readonly queues = new Map<string, Promise<unknown>>();

  constructor(
    private readonly repo: AuditRepo,
    private readonly metrics: Metrics,
    private readonly now: () => number = Date.now,
  ) {}

  append(event: AuditEvent): Promise<AuditEntry> {
    const previous = this.queues.get(event.orgId) ?? Promise.resolve();
    const appended = previous.catch(() => undefined).then(() => this.appendNow(event));
    this.queues.set(event.orgId, appended);
    void appended.finally(() => {
      if (this.queues.get(event.orgId) === appended) this.queues.delete(event.orgId);
    }).catch(() => undefined);
    return appended;
  }

  private async appendNow(event: AuditEvent): Promise<AuditEntry> {
    const head = this.heads.get(event.orgId) ?? (await this.loadHead(event.orgId));
    const entry = chainEntry(
      {
        org_id: event.orgId,
        seq: head.seq + 1,
        at: this.now(),
        actor: event.actor,
        action: event.action,
        target: event.target,
        details: JSON.stringify(event.details ?? {}),
      },
      head.hash,
    );
    try {
      await this.repo.append(entry);
    } catch (err) {
      // The head may or may not have been written: read it again next time.
      this.heads.delete(event.orgId);
      throw err;
    }
    this.heads.set(event.orgId, { seq: entry.seq, hash: entry.hash });
    this.metrics.auditAppends.inc();
    return entry;
  }

  private async loadHead(orgId: string): Promise<{ seq: number; hash: string }> {
    const last = await this.repo.last(orgId);
    return last ? { seq: last.seq, hash: last.hash } : { seq: 0, hash: genesisHash };
  }

  list(orgId: string, opts: { limit: number; beforeSeq?: number }): Promise<AuditEntry[]> {
    return this.repo.page(orgId, opts);
  }

  /** Re-reads the whole ledger of an org and re-checks every link and hash. */
  async verify(orgId: string, chunk = 10_000): Promise<ChainVerdict> {
    let position = chainStart;
    let checked = 0;
    // The first read starts below seq 1, so an entry forged before the start is seen too.
    let fromSeq = 0;
    for (;;) {
      const entries = await this.repo.ascending(orgId, { fromSeq, limit: chunk });
      const verdict = verifyChain(entries, position);
      if (!verdict.valid) return { valid: false, entries: checked, broken_at: verdict.broken_at, reason: verdict.reason };
      checked += entries.length;
      position = verdict.next;
      fromSeq = position.seq;
      if (entries.length < chunk) return { valid: true, entries: checked };
    }
  }
}
