import { actorPersonKey, actorPersonOf } from '../../application/audit-ledger';
import type Router from '@koa/router';
import type { Context } from 'koa';
import { z } from 'zod';
import { validationError } from '../../core/errors';
import type { AuditEntry } from '../../core/audit-chain';
import { auditVerifyCost } from '../../core/query-cost';
import { orgIdSchema } from '../../core/ids';
import { iso } from '../../core/time';
import { principalOf, requirePermission } from '../auth';
import type { ApiDeps } from '../deps';
import { decodeCursor, encodeCursor, limitSchema, pageOf } from '../pagination';
import { chargeQuery } from '../query-budget';
import { parseOrThrow, singleQuery } from '../validation';

export const listSchema = z
  .object({ org_id: orgIdSchema.optional(), limit: limitSchema, cursor: z.string().max(512).optional() })
  .strict();
export const verifySchema = z
  .object({
    org_id: orgIdSchema.optional(),
    // Not `limit`: that names a page's size (at most 1,000) everywhere else.
    max_entries: z.coerce.number().int().min(1).max(1_000_000).optional().meta({ description: 'entries to check in this call; at most, and by default, AUDIT_VERIFY_MAX_ENTRIES' }),
    cursor: z.string().max(512).optional().meta({ description: "where the previous call's check stopped (its next_cursor)" }),
  })
  .strict();
const cursorSchema = z.object({ seq: z.number().int().min(0) });
/** Where a verification resumes: the seq the next entry must carry and the hash it must link to. */
const verifyCursorSchema = z.object({ seq: z.number().int().min(1), prev_hash: z.string().regex(/^(hmac:)?[0-9a-f]{64}$/) });

/** An entry as clients read it: the actor's person beside the actor, not again among the details it is hashed with. */
function entryView(entry: AuditEntry) {
  let details: unknown;
  try {
    details = JSON.parse(entry.details);
  } catch {
    details = entry.details;
  }
  if (details && typeof details === 'object' && actorPersonKey in details) {
    const rest = { ...(details as Record<string, unknown>) };
    delete rest[actorPersonKey];
    details = rest;
  }
  return {
    seq: entry.seq,
    at: iso(entry.at),
    actor: entry.actor,
    actor_person: actorPersonOf(entry),
    action: entry.action,
    target: entry.target,
    details,
    prev_hash: entry.prev_hash,
    hash: entry.hash,
  };
}

/** A workspace reads its own ledger; the platform admin names the org it reads. */
function ledgerOrg(ctx: Context, requested?: string): string {
  const principal = principalOf(ctx);
  if (principal.kind === 'workspace') return principal.orgId;
  if (!requested) throw validationError('org_id is required with the platform admin key', [{ path: 'org_id', message: 'required' }]);
  return requested;
}

export function registerAuditRoutes(router: Router, deps: ApiDeps): void {
  const guard = requirePermission('audit:read');

  router.get('/v1/audit', guard, async (ctx) => {
    const query = parseOrThrow(listSchema, singleQuery(ctx.query), 'query');
    const orgId = ledgerOrg(ctx, query.org_id);
    const after = decodeCursor(query.cursor, cursorSchema);
    const rows = await deps.audit.list(orgId, { limit: query.limit + 1, beforeSeq: after?.seq });
    ctx.body = pageOf(rows, query.limit, (e) => ({ seq: e.seq }), entryView);
  });

  /**
   * Checks at most AUDIT_VERIFY_MAX_ENTRIES entries a call, paid for from the
   * key's query budget (the unread part is given back); `next_cursor` resumes
   * a longer ledger where the call stopped.
   */
  router.get('/v1/audit/verify', guard, async (ctx) => {
    const query = parseOrThrow(verifySchema, singleQuery(ctx.query), 'query');
    const orgId = ledgerOrg(ctx, query.org_id);
    const maxEntries = query.max_entries ?? deps.auditVerifyMaxEntries;
    if (maxEntries > deps.auditVerifyMaxEntries) {
      throw validationError(`one call checks at most ${deps.auditVerifyMaxEntries} entries (AUDIT_VERIFY_MAX_ENTRIES): go on with next_cursor`, [
        { path: 'max_entries', message: `at most ${deps.auditVerifyMaxEntries}` },
      ]);
    }
    const resume = decodeCursor(query.cursor, verifyCursorSchema);
    const giveBack = await chargeQuery(ctx, deps.queryBudget, auditVerifyCost(maxEntries));
    const verdict = await deps.audit.verify(orgId, { from: resume && { seq: resume.seq, prevHash: resume.prev_hash }, maxEntries });
    await giveBack(auditVerifyCost(maxEntries) - auditVerifyCost(verdict.entries));
    const { next, ...shown } = verdict;
    ctx.body = { ...shown, next_cursor: next ? encodeCursor({ seq: next.seq, prev_hash: next.prevHash }) : null };
  });
}
