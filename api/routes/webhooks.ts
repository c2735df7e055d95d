import type Router from '@koa/router';
import type { Context } from 'koa';
import { z } from 'zod';
import { isoOrNull, iso } from '../../core/time';
import type { Webhook, WebhookDelivery } from '../../core/webhook';
import { webhookEventTypes } from '../../core/webhook-events';
import { orgOf, principalOf, requirePermission } from '../auth';
import { readBody } from '../body';
import type { ApiDeps } from '../deps';
import { decodeCursor, limitSchema, pageOf } from '../pagination';
import { knownIdForm, parseOrThrow, pathParam, singleQuery } from '../validation';

const url = z.string().trim().min(1).max(2048);
const events = z.array(z.enum(webhookEventTypes)).min(1).max(webhookEventTypes.length);
const description = z.string().trim().max(500);
export const createSchema = z.object({ url, events, description: description.optional() }).strict();
export const patchSchema = z
  .object({ url: url.optional(), events: events.optional(), description: description.optional() })
  .strict()
  .refine((p) => Object.keys(p).length > 0, 'nothing to change');
export const listSchema = z
  .object({ status: z.enum(['active', 'failing', 'deleted']).optional(), limit: limitSchema, cursor: z.string().max(512).optional() })
  .strict();
export const pageSchema = z.object({ limit: limitSchema, cursor: z.string().max(512).optional() }).strict();
const cursorSchema = z.object({ created_at: z.number().int(), id: z.string().max(64) });
const deliveryCursorSchema = z.object({ first_attempt_at: z.number().int(), event_id: z.string().max(64) });

/** A subscription as clients see it: never its secret, which only the creation answer shows. */
function webhookView(w: Webhook) {
  return {
    id: w.id,
    url: w.url,
    events: w.events,
    description: w.description,
    status: w.status,
    failing_since: isoOrNull(w.failing_since),
    created_at: iso(w.created_at),
    updated_at: iso(w.updated_at),
    version: w.version,
  };
}

function deliveryView(d: WebhookDelivery) {
  return {
    event_id: d.event_id,
    event_type: d.event_type,
    status: d.status,
    attempts: d.attempts,
    response_code: d.response_code || null,
    latency_ms: d.latency_ms,
    error: d.error || null,
    first_attempt_at: iso(d.first_attempt_at),
    last_attempt_at: iso(d.last_attempt_at),
    next_attempt_at: isoOrNull(d.next_attempt_at),
  };
}

const webhookId = (ctx: Context) => knownIdForm('whk', pathParam(ctx, 'id'), 'webhook');

export function registerWebhookRoutes(router: Router, deps: ApiDeps): void {
  const manage = requirePermission('webhooks:manage');
  const read = requirePermission('read');
  const body = async (ctx: Context) => (await readBody(ctx, { limitBytes: deps.bodyLimitBytes, accept: ['json'] }))!.value;

  router.post('/v1/webhooks', manage, async (ctx) => {
    const input = parseOrThrow(createSchema, await body(ctx), 'webhook');
    const { webhook, secret } = await deps.webhooks.create(orgOf(ctx), principalOf(ctx).keyId, input);
    ctx.status = 201;
    ctx.body = { ...webhookView(webhook), secret };
  });

  router.get('/v1/webhooks', read, async (ctx) => {
    const q = parseOrThrow(listSchema, singleQuery(ctx.query), 'query');
    const rows = await deps.webhooks.list(orgOf(ctx), { status: q.status, limit: q.limit + 1, after: decodeCursor(q.cursor, cursorSchema) });
    ctx.body = pageOf(rows, q.limit, (w) => ({ created_at: w.created_at, id: w.id }), webhookView);
  });

  router.get('/v1/webhooks/:id', read, async (ctx) => {
    ctx.body = webhookView(await deps.webhooks.get(orgOf(ctx), webhookId(ctx)));
  });

  router.patch('/v1/webhooks/:id', manage, async (ctx) => {
    const id = webhookId(ctx);
    const change = parseOrThrow(patchSchema, await body(ctx), 'webhook change');
    ctx.body = webhookView(await deps.webhooks.update(orgOf(ctx), principalOf(ctx).keyId, id, change));
  });

  router.delete('/v1/webhooks/:id', manage, async (ctx) => {
    ctx.body = webhookView(await deps.webhooks.delete(orgOf(ctx), principalOf(ctx).keyId, webhookId(ctx)));
  });

  router.post('/v1/webhooks/:id/test', manage, async (ctx) => {
    const id = webhookId(ctx);
    ctx.status = 202;
    ctx.body = { webhook_id: id, ...(await deps.webhooks.test(orgOf(ctx), id)) };
  });

  router.get('/v1/webhooks/:id/deliveries', read, async (ctx) => {
    const id = webhookId(ctx);
    const q = parseOrThrow(pageSchema, singleQuery(ctx.query), 'query');
    const rows = await deps.webhooks.deliveries(orgOf(ctx), id, { limit: q.limit + 1, after: decodeCursor(q.cursor, deliveryCursorSchema) });
    ctx.body = pageOf(rows, q.limit, (d) => ({ first_attempt_at: d.first_attempt_at, event_id: d.event_id }), deliveryView);
  });
}
