import type { Context, Next } from 'koa';

/**
 * Headers on every answer. `no-store`: an answer may hold a workspace's data
 * or a key's secret, and no cache between client and service may keep it.
 * `nosniff`: browsers take the declared content type, never guess one. A
 * route with caching of its own (the console's hashed assets, the docs) sets
 * Cache-Control after this; an error answer is never cached.
 */
export function securityHeaders() {
  return async function setSecurityHeaders(ctx: Context, next: Next): Promise<void> {
    ctx.set('Cache-Control', 'no-store');
    ctx.set('X-Content-Type-Options', 'nosniff');
    await next();
    if (ctx.status >= 400) ctx.set('Cache-Control', 'no-store');
  };
}
