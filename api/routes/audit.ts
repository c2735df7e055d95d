import type Router from '@koa/router';
import type { Context } from 'koa';
import { z } from 'zod';
import { validationError } from '../../core/errors';
import type { AuditEntry } from '../../core/audit-chain';
import { orgIdSchema } from '../../core/ids';
import { iso } from '../../core/time';
import { principalOf, requirePermission } from '../auth';
import type { ApiDeps } from '../deps';
import { decodeCursor, limitSchema, pageOf } from '../pagination';
import { parseOrThrow, singleQuery } from '../validation';

export const listSchema = z
  .object({ org_id: orgIdSchema.optional(), limit: limitSchema, cursor: z.string().max(512).optional() })
  .strict();
export const verifySchema = z.object({ org_id: orgIdSchema.optional() }).strict();
const cursorSchema = z.object({ seq: z.number().int().min(0) });

function entryView(entry: AuditEntry) {
  let details: unknown;
  try {
    details = JSON.parse(entry.details);
  } catch {
    details = entry.details;
  }
  return {
    seq: entry.seq,
    at: iso(entry.at),
    actor: entry.actor,
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

  router.get('/v1/audit/verify', guard, async (ctx) => {
    const query = parseOrThrow(verifySchema, singleQuery(ctx.query), 'query');
    ctx.body = await deps.audit.verify(ledgerOrg(ctx, query.org_id));
  });
}
